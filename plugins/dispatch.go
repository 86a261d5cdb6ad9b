package plugins

import "context"

// DispatchReporter is implemented by a tool whose Execute says when its effect begins, by
// calling Dispatch just before it (a command tool: before the command starts). The effect
// ledger then records the call at that moment instead of before Execute, so a call that
// failed, ran out of time or was stopped before its effect began is known not to have
// happened: it can run again instead of being left unknown.
type DispatchReporter interface {
	// ReportsDispatch is true when Execute calls Dispatch before its first effect and
	// performs none when Dispatch returns an error.
	ReportsDispatch() bool
}

type dispatchKey struct{}

// WithDispatch returns ctx carrying record, which Dispatch calls. It is for the executor:
// record writes the dispatch to the effect ledger and returns once it is durable.
func WithDispatch(ctx context.Context, record func(context.Context) error) context.Context {
	return context.WithValue(ctx, dispatchKey{}, record)
}

// Dispatch says that the call's effect begins now, and returns once that is recorded. On an
// error the tool performs no effect and fails the call with the error: the call was
// abandoned (its deadline passed, its run stopped), another execution dispatched it, or the
// record could not be written. Outside the executor (nothing to record in ctx) it returns nil.
func Dispatch(ctx context.Context) error {
	record, ok := ctx.Value(dispatchKey{}).(func(context.Context) error)
	if !ok {
		return nil
	}
	return record(ctx)
}
