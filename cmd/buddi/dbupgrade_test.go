package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/doctor"
	"buddi/pgcluster"
)

// TestOlderClusterGetsTheSentence fakes a cluster made by PostgreSQL 9 (its PG_VERSION says
// so) and checks that every way in says what to do in one sentence, with the "do first" exit
// code and none of PostgreSQL's FATAL lines.
func TestOlderClusterGetsTheSentence(t *testing.T) {
	home, _, vars := env(t)
	if code, _, stderr := runBuddi(t, vars, 3*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: exit %d\n%s", code, stderr)
	}
	versionFile := filepath.Join(home, "pg", "data", "PG_VERSION")
	if err := os.WriteFile(versionFile, []byte("9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	installed := pgcluster.Installed()
	if len(installed) == 0 {
		t.Fatal("this test needs PostgreSQL server binaries")
	}
	newest := installed[0].Major
	dataDir := filepath.Join(home, "pg", "data")
	want := "The database in " + dataDir + " was made by PostgreSQL 9, and only "
	advice := "install postgresql-9 (apt-get install postgresql-9), or run `buddi db upgrade` to move it to " + newest + " (a backup is taken first)."

	// doctor says the same, as the fix, not DATABASE_URL advice.
	if code, stdout, _ := runBuddi(t, vars, time.Minute, "doctor"); code != doctor.ExitDoFirst || !strings.Contains(stdout, advice) || strings.Contains(stdout, "DATABASE_URL") {
		t.Errorf("doctor: exit %d\n%s", code, stdout)
	}
	for _, args := range [][]string{{"db", "status"}, {"db", "migrate"}, {"serve"}} {
		code, _, stderr := runBuddi(t, vars, time.Minute, args...)
		if code != doctor.ExitDoFirst {
			t.Errorf("buddi %v: exit %d, want %d\n%s", args, code, doctor.ExitDoFirst, stderr)
		}
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, advice) {
			t.Errorf("buddi %v said:\n%s\nwant the sentence %q … %q", args, stderr, want, advice)
		}
		if strings.Contains(stderr, "FATAL") || strings.Contains(stderr, "DATABASE_URL") {
			t.Errorf("buddi %v shows the server's FATAL lines or DATABASE_URL advice:\n%s", args, stderr)
		}
	}

	code, stdout, stderr := runBuddi(t, vars, time.Minute, "db", "upgrade")
	if code != doctor.ExitDoFirst {
		t.Errorf("db upgrade: exit %d, want %d\n%s%s", code, doctor.ExitDoFirst, stdout, stderr)
	}
	if !strings.Contains(stderr, "was made by PostgreSQL 9, whose programs are not installed here: pg_upgrade needs them, and so would a dump and restore") ||
		!strings.Contains(stderr, "install postgresql-9 (apt-get install postgresql-9)") {
		t.Errorf("db upgrade said:\n%s", stderr)
	}
	if b, _ := os.ReadFile(versionFile); strings.TrimSpace(string(b)) != "9" {
		t.Errorf("db upgrade changed the cluster: PG_VERSION = %q", b)
	}

	// Put the real version back: db upgrade has nothing to do.
	if err := os.WriteFile(versionFile, []byte(newest+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runBuddi(t, vars, time.Minute, "db", "upgrade", "--json")
	if code != 0 {
		t.Fatalf("db upgrade on a current cluster: exit %d\n%s", code, stderr)
	}
	var res pgcluster.UpgradeResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.From != newest || res.To != newest || res.Kept != "" {
		t.Errorf("db upgrade --json = %s (%v), want nothing done at %s", stdout, err, newest)
	}
}
