package queue_test

import (
	"strings"
	"testing"
	"time"

	"buddi/queue"
)

func TestGroupByCause(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
	jobs := []queue.FailedJob{
		{ID: 1, State: "discarded", Error: "anthropic: The model provider is limiting this account's requests", FinalizedAt: ago(25 * time.Hour)},
		{ID: 2, State: "discarded", Error: "anthropic: status 429: rate limit", FinalizedAt: ago(time.Hour)},
		{ID: 3, State: "cancelled", Error: "openai: The model provider refused this account's key", FinalizedAt: ago(time.Hour)},
		{ID: 4, State: "discarded", Error: `fetch job 4812 for "ann@example.com" failed after 3 tries`, FinalizedAt: ago(time.Minute)},
		{ID: 5, State: "discarded", Error: `fetch job 99 for "bob@example.com" failed after 12 tries` + "\nstack…", FinalizedAt: ago(time.Minute)},
		{ID: 6, State: "cancelled", Error: `fetch job 99 for "bob@example.com" failed after 12 tries`, FinalizedAt: ago(time.Minute)},
	}
	causes := queue.Group(jobs, now)
	want := map[string][]int64{
		"quota/anthropic":    {1, 2},
		"refused-key/openai": {3},
		"other/discarded/fetch job N for … failed after N tries": {4, 5},
		"other/cancelled/fetch job N for … failed after N tries": {6},
	}
	if len(causes) != len(want) {
		t.Fatalf("causes: %+v", causes)
	}
	for _, c := range causes {
		ids, ok := want[c.Key]
		if !ok || len(ids) != len(c.Jobs) || ids[0] != c.Jobs[0] {
			t.Errorf("cause %q: %v, want %v", c.Key, c.Jobs, ids)
		}
		if c.Key == "quota/anthropic" && !c.Passed {
			t.Error("a quota a day later has plausibly passed")
		}
		if c.Key == "refused-key/openai" && c.Passed {
			t.Error("a refused key does not pass by itself")
		}
	}
	if causes[0].Key != "quota/anthropic" && causes[0].Key != "other/discarded/fetch job N for … failed after N tries" {
		t.Errorf("the biggest group comes first: %q", causes[0].Key)
	}
}

// A group of other causes says why in the words of one of its jobs: ids, numbers and quoted
// values are taken out of the key that groups them, never out of the fix the owner reads.
func TestCauseKeepsTheFixItShows(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	jobs := []queue.FailedJob{
		{ID: 7, State: "discarded", Error: "the vault key is too short: make one with `openssl rand -base64 32` and set BUDDI_VAULT_KEY", FinalizedAt: &now},
		{ID: 8, State: "discarded", Error: "the vault key is too short: make one with `openssl rand -base64 48` and set BUDDI_VAULT_KEY", FinalizedAt: &now},
	}
	causes := queue.Group(jobs, now)
	if len(causes) != 1 || len(causes[0].Jobs) != 2 {
		t.Fatalf("the two jobs fail alike: %+v", causes)
	}
	if why := causes[0].Why; !strings.Contains(why, "openssl rand -base64 32") {
		t.Errorf("the cause reads %q: its fix lost its digits", why)
	}
}
