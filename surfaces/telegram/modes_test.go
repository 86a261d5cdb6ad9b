package telegram_test

import (
	"context"
	"strings"
	"testing"

	"buddi/core/executor"
	"buddi/core/permission"
)

// /agents lists each agent with its mode, read when asked, and says where it is changed.
func TestAgentsShowTheirModes(t *testing.T) {
	f := newFixture(t)
	modes := executor.NewModes(f.pool, testKey)
	f.mode = func(ctx context.Context, agent string) (string, error) {
		m, err := modes.Mode(ctx, agent)
		return string(m.Mode), err
	}
	if _, err := modes.SetMode(context.Background(), "helper", permission.ModePlan, "owner:terminal"); err != nil {
		t.Fatal(err)
	}
	f.start()
	f.pair()
	f.push(text(owner, ownerChat, "private", "/agents"))
	f.handled(2)
	texts := sentTexts(f.api.Calls("sendMessage"))
	if len(texts) != 2 {
		t.Fatalf("sent: %q", texts)
	}
	got := texts[1]
	for _, want := range []string{"@helper Helper · plan mode", "at most in accept-edits mode", "buddi agents mode"} {
		if !strings.Contains(got, want) {
			t.Errorf("/agents says %q; want %q in it", got, want)
		}
	}
}
