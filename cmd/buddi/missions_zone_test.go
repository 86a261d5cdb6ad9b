package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A mission added without --tz is in the owner's zone (here TZ names it), and `buddi
// missions list` shows each mission's zone and the owner's.
func TestMissionsAddInTheOwnersZone(t *testing.T) {
	_, _, vars := env(t, "TZ=Europe/Berlin")
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: %d %s%s", code, out, errOut)
	}
	code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "@dev", "--cron", "0 8 * * *", "--prompt", "Brief me.")
	if code != 0 || !strings.Contains(out, "every day at 08:00 (Europe/Berlin)") {
		t.Fatalf("missions add: %d %s%s", code, out, errOut)
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "dev", "--cron", "30 9 * * 1", "--prompt", "Plan the week.", "--json")
	var added map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &added) != nil || added["agent"] != "developer" || added["agent_handle"] != "@dev" ||
		added["timezone"] != "Europe/Berlin" || added["cron"] != "30 9 * * 1" || !strings.Contains(fmt.Sprint(added["cadence"]), "09:30") {
		t.Fatalf("missions add --json: %d %s%s", code, out, errOut)
	}
	code, out, errOut = runBuddi(t, vars, time.Minute, "missions", "list")
	if code != 0 || !strings.Contains(out, "ZONE") || !strings.Contains(out, "Europe/Berlin") || !strings.Contains(out, "is in Europe/Berlin (from TZ)") ||
		!strings.Contains(out, "@dev") {
		t.Fatalf("missions list: %d %s%s", code, out, errOut)
	}
}
