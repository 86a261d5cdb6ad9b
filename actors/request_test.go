package actors_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
)

func TestRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration
		to      func(t *testing.T, b *testBundle, root, w *actors.Ref) *actors.Ref
		msg     any
		want    any
		check   func(err error) bool
	}{
		{
			name: "answered", timeout: actorstest.Timeout, msg: actorstest.Echo{Value: 42}, want: 42,
			check: func(err error) bool { return err == nil },
		},
		{
			name: "fails while handling", timeout: actorstest.Timeout, msg: actorstest.Crash{Reason: "boom"},
			check: func(err error) bool {
				return err != nil && strings.Contains(err.Error(), "boom") && !errors.Is(err, context.DeadlineExceeded)
			},
		},
		{
			name: "never answered", timeout: 50 * time.Millisecond, msg: "no answer to this",
			check: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) },
		},
		{
			name: "stopped", timeout: actorstest.Timeout, msg: actorstest.Echo{Value: 1},
			to: func(t *testing.T, b *testBundle, _, w *actors.Ref) *actors.Ref {
				if err := b.sys.Stop(context.Background(), w); err != nil {
					t.Fatal(err)
				}
				return w
			},
			check: func(err error) bool { return errors.Is(err, actors.ErrNotRunning) },
		},
		{
			name: "supervisor", timeout: actorstest.Timeout, msg: actorstest.Echo{Value: 1},
			to:    func(_ *testing.T, _ *testBundle, root, _ *actors.Ref) *actors.Ref { return root },
			check: func(err error) bool { return err != nil && strings.Contains(err.Error(), "supervisor") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			root := b.supervisor(t, nil, "root", generous)
			to := b.spawn(t, root, "w")
			if tt.to != nil {
				to = tt.to(t, b, root, to)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			got, err := b.sys.Request(ctx, to, tt.msg)
			if !tt.check(err) || got != tt.want {
				t.Errorf("got %v, %v; want %v and a matching error", got, err, tt.want)
			}
		})
	}
}
