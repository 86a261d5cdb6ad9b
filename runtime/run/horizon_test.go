package run_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	"buddi/runtime/run"
)

func TestHorizons(t *testing.T) {
	created := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	now := created.Add(time.Second)
	tests := []struct {
		name     string
		h        run.Horizon
		attempt  int
		class    provider.Class
		retryAt  time.Time
		wantNext time.Time // zero: final
		why      string
	}{
		{"interactive transient retries by the curve", run.Interactive, 1, provider.Transient, time.Time{}, now.Add(5 * time.Second), ""},
		{"interactive third attempt is the last", run.Interactive, 3, provider.Transient, time.Time{}, time.Time{}, "all 3 attempts"},
		{"permanent is never retried", run.Unattended, 1, provider.Permanent, time.Time{}, time.Time{}, "permanent"},
		{"a later Retry-After wins over the curve", run.Interactive, 1, provider.Transient, now.Add(2 * time.Minute), now.Add(2 * time.Minute), ""},
		{"a reset past the horizon ends the job, saying so", run.Interactive, 1, provider.Transient, now.Add(time.Hour), time.Time{}, "after this run's 15m0s horizon"},
		{"unattended rises", run.Unattended, 4, provider.Transient, time.Time{}, now.Add(20 * time.Minute), ""},
		{"unattended eighth attempt is the last", run.Unattended, 8, provider.Transient, time.Time{}, time.Time{}, "all 8 attempts"},
		{"a daily reset past six hours ends an unattended run", run.Unattended, 2, provider.Transient, now.Add(20 * time.Hour), time.Time{}, "after this run's 6h0m0s horizon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, why := tt.h.Next(tt.attempt, created, now, tt.class, tt.retryAt)
			if !next.Equal(tt.wantNext) || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Fatalf("Next = %v, %q; want %v, %q", next, why, tt.wantNext, tt.why)
			}
		})
	}
	// Unknown failures get the short horizon even when nobody waits.
	if h := run.HorizonFor(false, provider.Unknown); h.Within != 15*time.Minute {
		t.Fatalf("unknown unattended: %+v", h)
	}
	if h := run.HorizonFor(false, provider.Transient); h.Within != 6*time.Hour || h.Attempts != 8 {
		t.Fatalf("transient unattended: %+v", h)
	}
	// The interactive curve fits its horizon; the unattended one too.
	for _, h := range []run.Horizon{run.Interactive, run.Unattended} {
		var sum time.Duration
		for i := 0; i < h.Attempts-1; i++ {
			sum += h.Delays[min(i, len(h.Delays)-1)]
		}
		if sum > h.Within {
			t.Fatalf("%+v: the delays add up to %v, past the horizon", h, sum)
		}
	}
}

func TestClassifyOverTheWholeChain(t *testing.T) {
	perm := &run.Problem{Kind: "account-disabled", Sentence: "The model account x is disabled."}
	wrapped := fmt.Errorf("step: %w", errors.Join(errors.New("other"), perm))
	if run.Classify(wrapped) != provider.Permanent {
		t.Fatal("a problem deep in the chain is permanent")
	}
	if run.Sentence(wrapped) != perm.Sentence {
		t.Fatalf("sentence %q", run.Sentence(wrapped))
	}
	if run.Classify(errors.New("mystery")) != provider.Unknown {
		t.Fatal("an unclassified failure is unknown")
	}
	if s := run.Sentence(errors.New("pq: relation does not exist at /src/x.go:12")); strings.Contains(s, "relation") || strings.Contains(s, ".go") {
		t.Fatalf("the owner's sentence leaks internals: %q", s)
	}
}
