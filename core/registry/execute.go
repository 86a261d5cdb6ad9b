package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"buddi/plugins"
)

// Status is how one execution ended, as the effect ledger records it.
type Status string

// The ways an execution ends.
const (
	// StatusSucceeded: the tool returned a result that is not an error.
	StatusSucceeded Status = "succeeded"
	// StatusFailed: the call was refused before the tool ran, or the tool returned an error,
	// returned a result marked as an error, or panicked.
	StatusFailed Status = "failed"
	// StatusUnknown: the deadline passed or the context was cancelled before the tool
	// returned, or the tool's error wraps [plugins.ErrOutcomeUnknown]. Whether the effect
	// happened is unknown: show it for review, never retry it blindly.
	StatusUnknown Status = "unknown"
)

// Outcome is one execution with what the log and the ledger need beyond the model's Result.
type Outcome struct {
	// Result is what the model is told. IsError is set unless Status is StatusSucceeded.
	Result plugins.Result
	// Status is how the execution ended.
	Status Status
	// Err is the cause chain for the log (the tool's error, the panic with its stack, the
	// context's error), or nil on success.
	Err error
}

// Execute performs call and returns the result for the model. It is [Registry.Run] without
// the status; see there.
func (r *Registry) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) plugins.Result {
	return r.Run(ctx, call, approved).Result
}

// Run performs call with the tool's Execute under the tool's timeout (its Spec's Timeout, or
// [DefaultTimeout]) as a deadline on ctx. approved is the envelope the owner approved, or nil
// for a call that needed no approval.
//
// Run is the mechanism, not the gate: it decides no tier, and a caller reaches it only with a
// [Resolution] whose tier is auto or session, or for an approved action. It still refuses,
// as a failed outcome, an unknown tool, a draft tool and arguments that fail the schema.
//
// A panic in Execute, a returned error, or a result marked as an error is a tool-error
// (StatusFailed), never a success; an error wrapping [plugins.ErrOutcomeUnknown] is one with
// StatusUnknown (the tool's effect began and its end was not heard). When the deadline
// passes, or ctx is cancelled, before the tool returns, Run returns a tool-error at once with
// StatusUnknown: a tool that ignores its ctx cannot hold the caller, but its goroutine is
// abandoned, still running, and whether the effect happened is unknown.
func (r *Registry) Run(ctx context.Context, call plugins.Call, approved *plugins.Envelope) Outcome {
	e, ok := r.entries[call.Tool]
	if !ok {
		return failedOutcome(refuse(CodeUnknownTool, call.Tool, nil, "there is no tool named %s", quoteName(call.Tool)))
	}
	if _, aerr := checkArgs(e.schema, call.Args); aerr != nil {
		return failedOutcome(refuse(CodeInvalidArguments, call.Tool, nil, "%s", aerr.msg))
	}
	if e.spec.Tier == plugins.TierDraft {
		return failedOutcome(refuse(CodeTierNotExecutable, call.Tool, nil, "%s is a draft and cannot be called yet", call.Tool))
	}
	timeout := e.timeout()
	g := guard(ctx, timeout, func(ctx context.Context) (plugins.Result, error) {
		return e.tool.Execute(ctx, call, approved)
	})
	switch {
	case g.abandoned:
		text := fmt.Sprintf("%s did not finish within %v; whether it took effect is unknown, so check before trying again", call.Tool, timeout)
		if !errors.Is(g.ctxErr, context.DeadlineExceeded) {
			text = fmt.Sprintf("%s was cancelled before it finished; whether it took effect is unknown, so check before trying again", call.Tool)
		}
		return Outcome{
			Result: plugins.Result{Text: text, IsError: true},
			Status: StatusUnknown,
			Err:    fmt.Errorf("registry: execute %s: abandoned after %v: %w", call.Tool, timeout, g.ctxErr),
		}
	case g.panicked:
		return Outcome{
			Result: plugins.Result{Text: fmt.Sprintf("%s failed: the tool crashed", call.Tool), IsError: true},
			Status: StatusFailed,
			Err:    fmt.Errorf("registry: execute %s: %w", call.Tool, g.crash),
		}
	case g.err != nil && errors.Is(g.err, plugins.ErrOutcomeUnknown):
		return Outcome{
			Result: plugins.Result{Text: fmt.Sprintf("%s may or may not have taken effect, and it will not be retried: %s", call.Tool, oneLine(g.err.Error())), IsError: true, Data: g.val.Data},
			Status: StatusUnknown,
			Err:    fmt.Errorf("registry: execute %s: outcome unknown: %w", call.Tool, g.err),
		}
	case g.err != nil:
		return Outcome{
			Result: plugins.Result{Text: fmt.Sprintf("%s failed: %s", call.Tool, oneLine(g.err.Error())), IsError: true, Data: g.val.Data},
			Status: StatusFailed,
			Err:    fmt.Errorf("registry: execute %s: %w", call.Tool, g.err),
		}
	case g.val.IsError:
		return Outcome{Result: g.val, Status: StatusFailed, Err: fmt.Errorf("registry: execute %s: the tool reported an error: %s", call.Tool, oneLine(g.val.Text))}
	}
	return Outcome{Result: g.val, Status: StatusSucceeded}
}

// failedOutcome is a refusal as a tool-error.
func failedOutcome(ref *Refusal) Outcome {
	return Outcome{
		Result: plugins.Result{Text: fmt.Sprintf("%s was refused: %s", quoteName(ref.Tool), ref.Reason), IsError: true},
		Status: StatusFailed,
		Err:    ref,
	}
}

// Describe renders call's effect envelope and preview with the tool's Describe, under the
// tool's timeout. The arguments are validated first. An error from the tool, a panic, a
// missed deadline, or an envelope naming an effect the tool does not declare refuses the call
// before any action exists: the error is a *[Refusal] ([CodeUnknownTool],
// [CodeInvalidArguments], [CodeTierNotExecutable] or [CodeDescribeFailed]) whose Reason is
// the tool's message for the model.
func (r *Registry) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	e, ok := r.entries[call.Tool]
	if !ok {
		return plugins.Envelope{}, refuse(CodeUnknownTool, call.Tool, nil, "there is no tool named %s", quoteName(call.Tool))
	}
	if _, aerr := checkArgs(e.schema, call.Args); aerr != nil {
		return plugins.Envelope{}, refuse(CodeInvalidArguments, call.Tool, nil, "%s", aerr.msg)
	}
	if e.spec.Tier == plugins.TierDraft {
		return plugins.Envelope{}, refuse(CodeTierNotExecutable, call.Tool, nil, "%s is a draft and cannot be called yet", call.Tool)
	}
	g := guard(ctx, e.timeout(), func(ctx context.Context) (plugins.Envelope, error) {
		return e.tool.Describe(ctx, call)
	})
	switch {
	case g.panicked:
		return plugins.Envelope{}, refuse(CodeDescribeFailed, call.Tool, fmt.Errorf("registry: describe %s: %w", call.Tool, g.crash),
			"%s could not describe the call: the tool crashed", call.Tool)
	case g.abandoned:
		return plugins.Envelope{}, refuse(CodeDescribeFailed, call.Tool, fmt.Errorf("registry: describe %s: %w", call.Tool, g.ctxErr),
			"%s could not describe the call in time", call.Tool)
	case g.err != nil:
		return plugins.Envelope{}, refuse(CodeDescribeFailed, call.Tool, fmt.Errorf("registry: describe %s: %w", call.Tool, g.err),
			"%s", oneLine(g.err.Error()))
	}
	for _, eff := range g.val.Effects {
		if !e.effects[eff] {
			return plugins.Envelope{}, refuse(CodeDescribeFailed, call.Tool, nil,
				"%s described an effect it does not declare (%q); the call cannot proceed", call.Tool, string(eff))
		}
	}
	return g.val, nil
}

// oneLine folds a message onto one line for a sentence.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
