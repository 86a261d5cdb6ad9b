package registry

import (
	"fmt"
	"strings"
)

// Code names why the registry refused a call. It is stable: the event log, the approvals
// machinery and the tests match on it. A Code is also an error, so
// errors.Is(err, registry.CodeUnknownTool) reports whether err is a [Refusal] with that code.
type Code string

// The reasons a call is refused.
const (
	// CodeUnknownTool: no tool of that name is registered.
	CodeUnknownTool Code = "unknown-tool"
	// CodeInvalidArguments: the arguments are not one JSON object, or fail the tool's schema.
	CodeInvalidArguments Code = "invalid-arguments"
	// CodeTierNotExecutable: the tool is declared draft, or TierFor answered something other
	// than auto, gated or session.
	CodeTierNotExecutable Code = "tier-not-executable"
	// CodeTierForFailed: the tool's TierFor panicked or did not answer before its deadline.
	CodeTierForFailed Code = "tier-for-failed"
	// CodeSessionNotAuthorized: a session-tier call outside a live owner request, for a tool
	// outside the agent's grant, without an agent or a conversation, or in a delegated run.
	CodeSessionNotAuthorized Code = "session-not-authorized"
	// CodeDescribeFailed: the tool's Describe returned an error, panicked, did not answer
	// before its deadline, or rendered an effect the tool does not declare. The call is
	// refused before any action exists.
	CodeDescribeFailed Code = "describe-failed"
)

// Error returns the code itself, so a Code can be the target of errors.Is.
func (c Code) Error() string { return string(c) }

// Refusal is the registry's one error type: a call it will not let through, and why.
type Refusal struct {
	// Code is the machine-readable reason.
	Code Code
	// Tool is the tool's name as the call gave it.
	Tool string
	// Reason is one plain sentence for the model (and the owner): what was wrong and, where
	// it helps, what would be right.
	Reason string
	// Err is the underlying cause for the log (a recovered panic with its stack, a context
	// error, a tool's own error), or nil.
	Err error
}

// Error renders the refusal for a log line: the code, the tool and the reason, then the cause.
func (r *Refusal) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "registry: %s refused (%s): %s", quoteName(r.Tool), r.Code, r.Reason)
	if r.Err != nil {
		fmt.Fprintf(&b, ": %v", r.Err)
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (r *Refusal) Unwrap() error { return r.Err }

// Is reports whether target is this refusal's Code, so errors.Is(err, CodeUnknownTool) works.
func (r *Refusal) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == r.Code
}

// refuse builds a Refusal.
func refuse(code Code, tool string, err error, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Tool: tool, Reason: fmt.Sprintf(format, args...), Err: err}
}

// LoadError is why New refused one tool or manifest. New joins one per problem found.
type LoadError struct {
	// Plugin is the manifest's name.
	Plugin string
	// Tool is the tool's name, or empty for a problem with the manifest itself.
	Tool string
	// Err says what is wrong.
	Err error
}

// Error names the plugin and the tool, then the problem.
func (e *LoadError) Error() string {
	if e.Tool == "" {
		return fmt.Sprintf("registry: plugin %s: %v", quoteName(e.Plugin), e.Err)
	}
	return fmt.Sprintf("registry: plugin %s: tool %s: %v", quoteName(e.Plugin), quoteName(e.Tool), e.Err)
}

// Unwrap returns the problem.
func (e *LoadError) Unwrap() error { return e.Err }

// quoteName renders a name for a sentence: as it is when it is plain, quoted in Go's form when
// it holds anything else, so a model's text cannot break the sentence.
func quoteName(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}
