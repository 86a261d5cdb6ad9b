package registry

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"buddi/plugins"
)

// execTool returns a registry holding test.x, whose Execute is fn, with the timeout given.
func execTool(t *testing.T, timeout time.Duration, fn func(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error)) *Registry {
	t.Helper()
	tool := newTool("test.x", plugins.TierAuto)
	tool.spec.Timeout = timeout
	tool.execute = fn
	return mustNew(t, manifest(tool))
}

func TestRunOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		execute  func(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error)
		status   Status
		wantText string
		wantErr  string // a piece of Outcome.Err
	}{
		{
			name: "error",
			execute: func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
				return plugins.Result{Text: "looks fine"}, errors.New("disk full\nreally")
			},
			status: StatusFailed, wantText: "test.x failed: disk full really", wantErr: "disk full",
		},
		{
			name: "error result",
			execute: func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
				return plugins.Result{Text: "no such file", IsError: true}, nil
			},
			status: StatusFailed, wantText: "no such file", wantErr: "reported an error",
		},
		{
			name: "goexit",
			execute: func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
				runtime.Goexit()
				return plugins.Result{Text: "unreachable"}, nil
			},
			status: StatusFailed, wantText: "crashed", wantErr: "Goexit",
		},
		{
			name: "panic",
			execute: func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
				panic("kaboom")
			},
			status: StatusFailed, wantText: "test.x failed: the tool crashed", wantErr: "kaboom",
		},
		{
			name: "panic nil",
			execute: func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
				panic(nil)
			},
			status: StatusFailed, wantText: "crashed", wantErr: "panic",
		},
		{
			name: "success",
			execute: func(_ context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
				return plugins.Result{Text: "read " + string(call.Args)}, nil
			},
			status: StatusSucceeded, wantText: `read {"path":"a"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := execTool(t, 0, tt.execute)
			out := reg.Run(t.Context(), plainCall("test.x", `{"path":"a"}`), nil)
			if out.Status != tt.status {
				t.Errorf("status = %s, want %s", out.Status, tt.status)
			}
			if out.Result.IsError != (tt.status != StatusSucceeded) {
				t.Errorf("IsError = %v for status %s", out.Result.IsError, out.Status)
			}
			if !strings.Contains(out.Result.Text, tt.wantText) {
				t.Errorf("text %q does not say %q", out.Result.Text, tt.wantText)
			}
			if tt.wantErr == "" && out.Err != nil || tt.wantErr != "" && (out.Err == nil || !strings.Contains(out.Err.Error(), tt.wantErr)) {
				t.Errorf("Err = %v, want one saying %q", out.Err, tt.wantErr)
			}
			if got := reg.Execute(t.Context(), plainCall("test.x", `{"path":"a"}`), nil); got.IsError != out.Result.IsError {
				t.Errorf("Execute IsError = %v, Run IsError = %v", got.IsError, out.Result.IsError)
			}
		})
	}
}

func TestRunRefusesBeforeExecuting(t *testing.T) {
	t.Parallel()
	ran := false
	tool := newTool("test.x", plugins.TierAuto)
	tool.execute = func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
		ran = true
		return plugins.Result{Text: "ok"}, nil
	}
	draft := newTool("test.draft", plugins.TierDraft)
	draft.execute = tool.execute
	reg := mustNew(t, manifest(tool, draft))
	tests := []struct {
		name string
		call plugins.Call
		code Code
	}{
		{"draft", plainCall("test.draft", `{"path":"a"}`), CodeTierNotExecutable},
		{"invalid args", plainCall("test.x", `{"path":1}`), CodeInvalidArguments},
		{"not an object", plainCall("test.x", `[]`), CodeInvalidArguments},
		{"unknown tool", plainCall("test.nope", `{}`), CodeUnknownTool},
	}
	for _, tt := range tests {
		out := reg.Run(t.Context(), tt.call, nil)
		if out.Status != StatusFailed || !out.Result.IsError || !errors.Is(out.Err, tt.code) {
			t.Errorf("%s: got %+v, want a failed outcome with %s", tt.name, out, tt.code)
		}
	}
	if ran {
		t.Error("the tool ran")
	}
}

func TestRunPassesApprovedEnvelope(t *testing.T) {
	t.Parallel()
	approved := &plugins.Envelope{Summary: "the approved one"}
	var got *plugins.Envelope
	reg := execTool(t, 0, func(_ context.Context, _ plugins.Call, a *plugins.Envelope) (plugins.Result, error) {
		got = a
		return plugins.Result{Text: "ok"}, nil
	})
	if out := reg.Run(t.Context(), plainCall("test.x", `{"path":"a"}`), approved); out.Status != StatusSucceeded {
		t.Fatalf("Run = %+v", out)
	}
	if got != approved {
		t.Errorf("tool saw envelope %v, want the approved one", got)
	}
}

func TestRunDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"default", 0, DefaultTimeout},
		{"declared", 90 * time.Second, 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var left time.Duration
			reg := execTool(t, tt.timeout, func(ctx context.Context, _ plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
				deadline, ok := ctx.Deadline()
				if !ok {
					return plugins.Result{}, errors.New("no deadline")
				}
				left = time.Until(deadline)
				return plugins.Result{Text: "ok"}, nil
			})
			if out := reg.Run(t.Context(), plainCall("test.x", `{"path":"a"}`), nil); out.Status != StatusSucceeded {
				t.Fatalf("Run = %+v", out)
			}
			if left > tt.want || left < tt.want-10*time.Second {
				t.Errorf("the tool had %v left, want about %v", left, tt.want)
			}
		})
	}
}

// TestRunHangsPastTimeout: a tool that ignores its ctx does not hold the caller; the attempt
// is unknown and reported as a tool-error at the deadline.
func TestRunHangsPastTimeout(t *testing.T) {
	t.Parallel()
	b := newBlocker(t)
	reg := execTool(t, 20*time.Millisecond, func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
		b.wait()
		return plugins.Result{Text: "done, too late"}, nil
	})
	out := reg.Run(t.Context(), plainCall("test.x", `{"path":"a"}`), nil)
	if out.Status != StatusUnknown || !out.Result.IsError {
		t.Fatalf("Run = %+v, want an unknown tool-error", out)
	}
	if !strings.Contains(out.Result.Text, "did not finish within 20ms") || !strings.Contains(out.Result.Text, "unknown") {
		t.Errorf("text = %q", out.Result.Text)
	}
	if !errors.Is(out.Err, context.DeadlineExceeded) {
		t.Errorf("Err = %v, want a deadline", out.Err)
	}
	select {
	case <-b.started:
	default:
		t.Error("the tool never started")
	}
}

// TestRunCancelled: the run is aborted while the tool works: unknown, at once.
func TestRunCancelled(t *testing.T) {
	t.Parallel()
	b := newBlocker(t)
	reg := execTool(t, time.Hour, func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
		b.wait()
		return plugins.Result{Text: "done"}, nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Outcome, 1)
	go func() { done <- reg.Run(ctx, plainCall("test.x", `{"path":"a"}`), nil) }()
	<-b.started
	cancel()
	out := <-done
	if out.Status != StatusUnknown || !out.Result.IsError || !strings.Contains(out.Result.Text, "cancelled") {
		t.Errorf("Run = %+v, want an unknown tool-error saying cancelled", out)
	}
	if !errors.Is(out.Err, context.Canceled) {
		t.Errorf("Err = %v, want context.Canceled", out.Err)
	}
}

// TestRunToolHonoursCtx: a tool that stops at its deadline and says so is still unknown when
// it has not returned in time, and failed when it returns its error first.
func TestRunToolHonoursCtx(t *testing.T) {
	t.Parallel()
	reg := execTool(t, 20*time.Millisecond, func(ctx context.Context, _ plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
		<-ctx.Done()
		return plugins.Result{}, ctx.Err()
	})
	out := reg.Run(t.Context(), plainCall("test.x", `{"path":"a"}`), nil)
	if out.Status == StatusSucceeded || !out.Result.IsError {
		t.Errorf("Run = %+v, want a tool-error", out)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	b := newBlocker(t)
	mk := func(name string, describe func(context.Context, plugins.Call) (plugins.Envelope, error)) *testTool {
		tool := newTool(name, plugins.TierGated)
		tool.spec.Timeout = 20 * time.Millisecond
		tool.describe = describe
		return tool
	}
	reg := mustNew(t, manifest(
		mk("test.ok", func(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
			return plugins.Envelope{Summary: "read " + string(call.Args), Effects: []plugins.Effect{plugins.EffectRead}, Preview: "p"}, nil
		}),
		mk("test.err", func(context.Context, plugins.Call) (plugins.Envelope, error) {
			return plugins.Envelope{}, errors.New("no such file: a")
		}),
		mk("test.panic", func(context.Context, plugins.Call) (plugins.Envelope, error) { panic("describe exploded") }),
		mk("test.hang", func(context.Context, plugins.Call) (plugins.Envelope, error) {
			b.wait()
			return plugins.Envelope{}, nil
		}),
		mk("test.undeclared", func(context.Context, plugins.Call) (plugins.Envelope, error) {
			return plugins.Envelope{Effects: []plugins.Effect{plugins.EffectNetWrite}}, nil
		}),
		newTool("test.draft", plugins.TierDraft),
	))

	env, err := reg.Describe(t.Context(), plainCall("test.ok", `{"path":"a"}`))
	if err != nil || env.Summary != `read {"path":"a"}` {
		t.Fatalf("Describe(test.ok) = %+v, %v", env, err)
	}

	tests := []struct {
		call   plugins.Call
		code   Code
		reason string
		cause  string
	}{
		{plainCall("test.draft", `{"path":"a"}`), CodeTierNotExecutable, "draft", ""},
		{plainCall("test.err", `{"path":"a"}`), CodeDescribeFailed, "no such file: a", "no such file"},
		{plainCall("test.hang", `{"path":"a"}`), CodeDescribeFailed, "in time", "deadline"},
		{plainCall("test.nope", `{"path":"a"}`), CodeUnknownTool, "no tool named", ""},
		{plainCall("test.ok", `{"path":2}`), CodeInvalidArguments, "/path", ""},
		{plainCall("test.panic", `{"path":"a"}`), CodeDescribeFailed, "crashed", "describe exploded"},
		{plainCall("test.undeclared", `{"path":"a"}`), CodeDescribeFailed, `"net_write"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.call.Tool, func(t *testing.T) {
			t.Parallel()
			env, err := reg.Describe(t.Context(), tt.call)
			var ref *Refusal
			if !errors.As(err, &ref) || ref.Code != tt.code {
				t.Fatalf("Describe = %+v, %v; want %s", env, err, tt.code)
			}
			if !strings.Contains(ref.Reason, tt.reason) {
				t.Errorf("reason %q does not say %q", ref.Reason, tt.reason)
			}
			if tt.cause != "" && !strings.Contains(err.Error(), tt.cause) {
				t.Errorf("error %q does not carry the cause %q", err, tt.cause)
			}
		})
	}
}

// TestOutcomeJSON keeps the result the model sees plain JSON.
func TestOutcomeJSON(t *testing.T) {
	t.Parallel()
	reg := execTool(t, 0, func(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
		return plugins.Result{}, errors.New("nope")
	})
	b, err := json.Marshal(reg.Execute(t.Context(), plainCall("test.x", `{"path":"a"}`), nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"text":"test.x failed: nope","is_error":true}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
