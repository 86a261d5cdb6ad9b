package plugins

import (
	"context"
	"encoding/json"
	"time"

	"buddi/core/permission"
)

// Effect is what a tool call does: read, fs_write, exec, net_read, net_write, state_write.
type Effect = permission.Effect

// The effects a tool may declare.
const (
	EffectRead       = permission.EffectRead
	EffectFSWrite    = permission.EffectFSWrite
	EffectExec       = permission.EffectExec
	EffectNetRead    = permission.EffectNetRead
	EffectNetWrite   = permission.EffectNetWrite
	EffectStateWrite = permission.EffectStateWrite
)

// Tier is how the registry treats a call: auto, gated, session or draft.
type Tier = permission.Tier

// The tiers.
const (
	TierAuto    = permission.TierAuto
	TierGated   = permission.TierGated
	TierSession = permission.TierSession
	TierDraft   = permission.TierDraft
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
	// DelegationDepth is 0 for a run the owner started, more for a delegate's run.
	DelegationDepth int
	// Owner is the live, authenticated owner request this call is part of, or nil.
	Owner *OwnerRequest
	// Granted reports whether the tool is in the agent's tools grant.
	Granted bool
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
	Name    string   `json:"name"`
	Options []string `json:"options"`
	Default string   `json:"default,omitempty"`
}

// Precondition is a fact the call depends on, checked again before dispatch.
type Precondition struct {
	What  string `json:"what"`
	Value string `json:"value"`
}

// Result is what a tool returns to the model.
type Result struct {
	// Text is the result for the model.
	Text string `json:"text"`
	// Data is structured output for the canvas, if any.
	Data json.RawMessage `json:"data,omitempty"`
	// IsError marks a result that reports a failure to the model.
	IsError bool `json:"is_error,omitempty"`
}
