package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Effect is one thing a tool call does, as the tool declares it. The permission policy
// decides from the declared effects, never from the tool's name.
type Effect string

// The effects a tool may declare.
const (
	// EffectRead reads data and changes nothing.
	EffectRead Effect = "read"
	// EffectFSWrite writes, creates or removes files.
	EffectFSWrite Effect = "fs_write"
	// EffectExec runs a program.
	EffectExec Effect = "exec"
	// EffectNetRead fetches from the network; the network policy applies to it.
	EffectNetRead Effect = "net_read"
	// EffectNetWrite sends data over the network; the network policy applies to it.
	EffectNetWrite Effect = "net_write"
	// EffectStateWrite changes buddi's own state (a memory, a reminder, a setting).
	EffectStateWrite Effect = "state_write"
)

// AllEffects returns every effect a tool may declare, in a fixed order.
func AllEffects() []Effect {
	return []Effect{EffectRead, EffectFSWrite, EffectExec, EffectNetRead, EffectNetWrite, EffectStateWrite}
}

// Valid reports whether e is one of the declared effects. The permission policy treats an
// effect it does not know as one that writes.
func (e Effect) Valid() bool {
	switch e {
	case EffectRead, EffectFSWrite, EffectExec, EffectNetRead, EffectNetWrite, EffectStateWrite:
		return true
	}
	return false
}

// Network reports whether e reaches the network, so the network policy applies to it.
func (e Effect) Network() bool {
	return e == EffectNetRead || e == EffectNetWrite
}

// Tier is how the registry treats a call.
type Tier string

// The tiers of seed 004's trust model.
const (
	// TierAuto executes directly.
	TierAuto Tier = "auto"
	// TierGated never executes in the registry: the call becomes an action and an approval,
	// and only the executor runs it once approved.
	TierGated Tier = "gated"
	// TierSession executes only inside a live, authenticated owner request, for a tool in
	// the agent's grant, in a run that is not delegated.
	TierSession Tier = "session"
	// TierDraft is a label; the registry refuses it as not executable.
	TierDraft Tier = "draft"
)

// Spec is what a tool declares about itself. The registry enforces it; agents cannot read or
// change it.
type Spec struct {
	// Name is "<plugin>.<verb>", e.g. "developer.run".
	Name string
	// Description is what the model is told the tool does.
	Description string
	// Schema is the JSON Schema (draft 2020-12) of the arguments, an object.
	Schema json.RawMessage
	// Effects are what every call may do; the permission policy decides from them.
	Effects []Effect
	// Tier is the declared tier, the floor: TierFor may make a call stricter, never looser.
	Tier Tier
	// Timeout bounds one execution; past it the attempt is unknown, not failed. Zero means
	// the executor's default.
	Timeout time.Duration
	// ReusableApproval lets the owner grant a standing permission for this tool.
	ReusableApproval bool
	// WaitsForOwner marks a tool whose call suspends the run until the owner answers.
	WaitsForOwner bool
}

// Tool is one capability. Describe is pure: the same call gives the same envelope, and it
// performs nothing.
type Tool interface {
	// Spec is the tool's declaration.
	Spec() Spec
	// Describe renders the call's effect envelope and preview. An error refuses the call
	// before any action exists (a bad path, a missing file), as a message for the model.
	Describe(ctx context.Context, call Call) (Envelope, error)
	// Execute performs the call. ctx is cancelled at the deadline or when the run is
	// aborted; honour it before each external operation. approved is the envelope the owner
	// approved (nil for auto calls): a tool that resolves mutable inputs compares its final
	// snapshot with it just before use. An error is a tool-error, never a success.
	Execute(ctx context.Context, call Call, approved *Envelope) (Result, error)
}

// TierNarrower is implemented by a tool that picks its tier per call among auto, gated and
// session. It runs after the arguments are validated; the declared tier stays the floor.
type TierNarrower interface {
	// TierFor returns the tier for call: auto, gated or session. It runs under the tool's
	// timeout, on a copy of the arguments.
	TierFor(ctx context.Context, call Call) Tier
}

// Call is one proposed tool call with who proposed it.
type Call struct {
	// Tool is the tool's name.
	Tool string
	// Args are the JSON arguments, validated against the tool's schema before the tool sees them.
	Args json.RawMessage
	// Agent is the id of the agent whose run proposed the call.
	Agent string
	// ConversationID is the conversation the run belongs to, if any.
	ConversationID string
	// RunID identifies the run.
	RunID string
	// CallID is the model's id of the call within the run, when a run proposed it: a rerun
	// proposing the same call finds the action it already became.
	CallID string
	// DelegationDepth is 0 for a run the owner started, more for a delegate's run.
	DelegationDepth int
	// Owner is the live, authenticated owner request this call is part of, or nil.
	Owner *OwnerRequest
	// Granted reports whether the tool is in the agent's tools grant.
	Granted bool
	// Remote marks a call from a run a remote caller asked for (buddi mcp): seed 002's
	// remote clamps apply to it, and it never carries an owner request.
	Remote bool
	// Surface is where the run's request came from ("dashboard", "telegram", "terminal",
	// "mcp"; empty for unattended work): seed 002's remote clamps apply to the calls of a
	// run from a remote surface (Telegram, buddi mcp). Not kept in an action: the recheck
	// before an approved action executes sees the owner's own mode.
	Surface string
	// Now is the call's clock: when it was proposed. Describe renders with it (never with the
	// wall clock), so the executor's second Describe before dispatch sees the same moment.
	Now time.Time
	// Picks are the owner's answers to the envelope's declared choices, by choice name; set
	// only when an approved action executes.
	Picks map[string]string
}

// OwnerRequest is an authenticated request from the owner on a surface.
type OwnerRequest struct {
	Surface   string    // "dashboard", "telegram", "terminal"
	ExpiresAt time.Time // the request's authentication ends here
}

// Live reports whether the request is still authenticated at now.
func (o *OwnerRequest) Live(now time.Time) bool { return o != nil && now.Before(o.ExpiresAt) }

// Envelope is the full description of what a call will do, rendered by Describe from the
// call alone. An action holds it, its hash covers it, and the owner's preview is drawn from it.
type Envelope struct {
	// Summary is one line for a person ("Run `go test ./...` in ~/code/app").
	Summary string `json:"summary"`
	// Effects are what this call does (a subset of the declared effects).
	Effects []Effect `json:"effects"`
	// Targets name what the call touches: paths, hosts, recipients.
	Targets []string `json:"targets,omitempty"`
	// Detail is the tool's complete, structured envelope (every recipient, the body, hashes).
	Detail map[string]any `json:"detail,omitempty"`
	// Preview is what the owner is shown, rendered from the envelope, never from model text.
	Preview string `json:"preview"`
	// Choices are decisions the owner makes at approval (which alias to send from).
	Choices []Choice `json:"choices,omitempty"`
	// Preconditions must still hold when the action executes ("file hash is …").
	Preconditions []Precondition `json:"preconditions,omitempty"`
}

// Choice is one decision the owner makes at approval, among declared options.
type Choice struct {
	Name    string   `json:"name"`              // the key of the owner's pick in Call.Picks
	Options []string `json:"options"`           // the values the owner may pick
	Default string   `json:"default,omitempty"` // taken if none is picked; empty: a pick is required
}

// Precondition is a fact the call depends on, checked again before dispatch.
type Precondition struct {
	What  string `json:"what"`  // the fact, e.g. "sha256 of <path>"
	Value string `json:"value"` // what it was when the call was described
}

// ErrOutcomeUnknown is wrapped by the error of an Execute whose effect began and ended
// without word of whether it took: a message's body was being handed to the server and the
// connection dropped, or the deadline passed, before the server's final answer. The registry
// reports such an execution as unknown, never failed, so it is shown for review and never
// retried blindly.
var ErrOutcomeUnknown = errors.New("plugins: whether the effect took place is unknown")

// Result is what a tool returns to the model.
type Result struct {
	// Text is the result for the model.
	Text string `json:"text"`
	// Data is structured output for the canvas, if any.
	Data json.RawMessage `json:"data,omitempty"`
	// IsError marks a result that reports a failure to the model.
	IsError bool `json:"is_error,omitempty"`
}

// PolicyFacts are what the permission policy reads about a call beyond the declared effects.
type PolicyFacts struct {
	// Shell marks a call that runs Args["command"] through a shell; the command(...) rules
	// apply to it.
	Shell bool
	// Edit marks a file edit, which accept-edits mode allows inside the workspace.
	Edit bool
	// Paths are the absolute paths the call touches; the workspace boundary applies to them.
	Paths []string
}

// PolicyDescriber is implemented by a tool whose calls the permission policy must see more
// of than their effects (a shell, an edit, the paths touched).
type PolicyDescriber interface {
	// PolicyFacts returns what the policy must know about call beyond its effects.
	PolicyFacts(call Call) PolicyFacts
}
