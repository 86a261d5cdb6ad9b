package actors_test

import (
	"strings"
	"testing"
	"time"

	"buddi/actors"
)

func TestStrategyString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		strategy actors.Strategy
		want     string
	}{
		{actors.Strategy{}, "one-for-one, no restarts, then stop and escalate"},
		{actors.Strategy{Kind: actors.AllForOne, Budget: actors.Budget{MaxRestarts: 1, Within: 10 * time.Second}}, "all-for-one, 1 restart in 10s, then stop and escalate"},
		{actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 3, Within: time.Minute}}, "one-for-one, 3 restarts in 1m0s, then stop and escalate"},
		{actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 2}}, "one-for-one, 2 restarts in total, then stop and escalate"},
	}
	for _, tt := range tests {
		if got := tt.strategy.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestStrategyInvalid(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		strategy actors.Strategy
		want     string
	}{
		{actors.Strategy{Kind: 7}, "unknown strategy kind"},
		{actors.Strategy{Budget: actors.Budget{MaxRestarts: -1}}, "MaxRestarts is negative"},
		{actors.Strategy{Budget: actors.Budget{Within: -time.Second}}, "Within is negative"},
	}
	for _, tt := range tests {
		_, err := b.sys.NewSupervisor(nil, "root", tt.strategy)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewSupervisor(%+v): got %v, want an error containing %q", tt.strategy, err, tt.want)
		}
	}
}
