package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"buddi/plugins"
)

// TestRunOutcomeUnknownFromTool: a tool whose error wraps plugins.ErrOutcomeUnknown (its
// effect began and its end was not heard) is reported unknown, not failed, with a text that
// says it may or may not have happened and is not retried; a plain error stays failed.
func TestRunOutcomeUnknownFromTool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		status Status
		text   string
	}{
		{"wrapped", fmt.Errorf("the connection dropped after the body was sent: %w", plugins.ErrOutcomeUnknown), StatusUnknown, "test.x may or may not have taken effect, and it will not be retried: the connection dropped"},
		{"joined", errors.Join(errors.New("EOF"), plugins.ErrOutcomeUnknown), StatusUnknown, "may or may not have taken effect"},
		{"plain", errors.New("the server refused the recipient"), StatusFailed, "test.x failed: the server refused the recipient"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := execTool(t, 0, func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
				return plugins.Result{}, tt.err
			})
			out := reg.Run(context.Background(), plainCall("test.x", `{"path":"a"}`), nil)
			if out.Status != tt.status || !out.Result.IsError || !strings.Contains(out.Result.Text, tt.text) {
				t.Fatalf("outcome = %s %+v, want %s with %q", out.Status, out.Result, tt.status, tt.text)
			}
			if !errors.Is(out.Err, tt.err) {
				t.Errorf("Err = %v, want the tool's error in its chain", out.Err)
			}
		})
	}
}
