package developer

import (
	"errors"
	"fmt"
	"io/fs"

	"buddi/plugins"
	"buddi/plugins/developer/confine"
)

// refusal is a rule saying no: one plain sentence for the model and the owner, never a
// fault of the machine. Describe returns it (the call is refused before any action exists),
// TierFor answers gated for it, and Execute turns it into a tool result marked as an error.
type refusal struct{ msg string }

// Error returns the sentence.
func (r *refusal) Error() string { return r.msg }

// refusef builds a refusal.
func refusef(format string, args ...any) *refusal {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// isRefusal reports whether err is a rule saying no rather than a fault: this package's
// refusals, confine's, and a path that does not exist or cannot be a path.
func isRefusal(err error) bool {
	var r *refusal
	return errors.As(err, &r) || confine.IsRefusal(err) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid)
}

// toolResult is Execute's answer for err: a refusal is a result for the model (STYLE: "an
// error meant for the model is a tool result"); anything else is an infrastructure fault.
func toolResult(err error) (plugins.Result, error) {
	if isRefusal(err) {
		return plugins.Result{Text: err.Error(), IsError: true}, nil
	}
	return plugins.Result{}, err
}
