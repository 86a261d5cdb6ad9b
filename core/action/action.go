package action

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/canonical"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/redact"
	"buddi/core/seal"
	"buddi/internal/readable"
	"buddi/internal/text"
	"buddi/plugins"
)

// PolicyVersion 3 seals the whole action (identity, arguments, the resolved effect envelope,
// its clock and expiry) with the installation's key; version 2 was an unkeyed SHA-256 that
// anyone who could write the database could compute, and is refused at execution.
const PolicyVersion = 3

// DefaultTTL is how long an action waits for a decision.
const DefaultTTL = 24 * time.Hour

// State is an approval's state.
type State string

// The states.
const (
	Pending   State = "pending"
	Approved  State = "approved"
	Executing State = "executing"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Unknown   State = "unknown"
	Rejected  State = "rejected"
	Expired   State = "expired"
	Refused   State = "refused"
)

// Valid reports whether s is one of the states.
func (s State) Valid() bool {
	switch s {
	case Pending, Approved, Executing, Succeeded, Failed, Unknown, Rejected, Expired, Refused:
		return true
	}
	return false
}

// Final reports whether nothing more happens to an approval in this state.
func (s State) Final() bool {
	switch s {
	case Succeeded, Failed, Unknown, Rejected, Expired, Refused:
		return true
	}
	return false
}

// Action is the immutable record of one proposed effect.
type Action struct {
	// ID is the action's UUID.
	ID string `json:"id"`
	// Tool is the tool's name, "<plugin>.<verb>".
	Tool string `json:"tool"`
	// ToolVersion is the version of the plugin that contributed the tool when the action was
	// made; the executor refuses the action once the plugin is at another version.
	ToolVersion string `json:"tool_version"`
	// Agent is the id of the agent whose run proposed the call.
	Agent string `json:"agent"`
	// ConversationID is the conversation's UUID, or empty when the run is in none.
	ConversationID string `json:"conversation_id,omitempty"`
	// RunID identifies the run that proposed the call.
	RunID string `json:"run_id,omitempty"`
	// CallID is the model's id of the call within its run.
	CallID string `json:"call_id,omitempty"`
	// DelegationDepth is 0 for a run the owner started, more for a delegate's run.
	DelegationDepth int `json:"delegation_depth"`
	// Args are the call's arguments as canonical JSON, byte for byte as hashed.
	Args json.RawMessage `json:"args"`
	// Envelope is what Describe rendered when the action was made; the preview is drawn from it.
	Envelope plugins.Envelope `json:"envelope"`
	// PolicyVersion is the policy version the hash was made under (PolicyVersion).
	PolicyVersion int `json:"policy_version"`
	// Hash is the action's seal (Hash): a keyed HMAC over everything above and the clock.
	Hash string `json:"hash"`
	// ExpiresAt is CreatedAt plus the proposal's TTL (default DefaultTTL); a pending action
	// past it expires.
	ExpiresAt time.Time `json:"expires_at"`
	// CreatedAt is the call's clock (Call.Now), or the database's now() when the call had none.
	CreatedAt time.Time `json:"created_at"`
}

// Call rebuilds the tool call the action was made from, with its original identity and
// clock (Describe sees exactly what it saw when the action was made).
func (a Action) Call() plugins.Call {
	return plugins.Call{
		Tool: a.Tool, Args: a.Args, Agent: a.Agent, ConversationID: a.ConversationID,
		RunID: a.RunID, CallID: a.CallID, DelegationDepth: a.DelegationDepth, Now: a.CreatedAt,
	}
}

// Call is the approved call to execute: the action's call with the owner's picks.
func (r Record) Call() plugins.Call {
	c := r.Action.Call()
	c.Picks = r.Approval.Picks
	return c
}

// Approval is the decision state of one action.
type Approval struct {
	// State is where the approval stands; it starts Pending.
	State State `json:"state"`
	// DecidedBy is the owner surface that decided (one of OwnerSurfaces), or
	// "standing:<id>" for an approval under a standing permission; empty until decided.
	DecidedBy string `json:"decided_by,omitempty"`
	// DecidedAt is when it was decided; nil until then.
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	// Picks are the option taken for each declared choice, by choice name, defaults filled
	// in; empty unless approved.
	Picks map[string]string `json:"picks,omitempty"`
	// Reason is the latest reason recorded: the owner's note at the decision, or why the
	// action expired, was refused, failed or is unknown.
	Reason string `json:"reason,omitempty"`
	// Result is the tool's plugins.Result as JSON once the tool ran; nil before.
	Result json.RawMessage `json:"result,omitempty"`
	// UpdatedAt is when the approval last changed.
	UpdatedAt time.Time `json:"updated_at"`
	// Seal is the decision's seal (decisionSeal): the action, the state decided, who decided,
	// the picks and when, under the installation's key; empty until decided.
	Seal string `json:"-"`
}

// Record is an action with its approval.
type Record struct {
	Action
	Approval Approval `json:"approval"` // the action's decision state
}

// Hash is the policy-version-3 hash of an action: the HMAC-SHA256, under the installation's
// key, of the canonical JSON of its id, tool, version, agent, conversation, run, call,
// delegation depth, arguments, effect envelope, creation time and expiry. Whoever can write
// the database but does not hold the key cannot make a row that checks.
func Hash(key seal.Key, a Action) (string, error) {
	if key.IsZero() {
		return "", fmt.Errorf("hash action: %w", seal.ErrNoKey)
	}
	canonArgs, err := canonical.JSON(a.Args)
	if err != nil {
		return "", fmt.Errorf("hash action: arguments: %w", err)
	}
	a.Envelope = storableEnvelope(a.Envelope)
	body, err := canonical.Marshal(map[string]any{
		"policy_version":   PolicyVersion,
		"id":               a.ID,
		"tool":             a.Tool,
		"version":          a.ToolVersion,
		"agent":            a.Agent,
		"conversation_id":  a.ConversationID,
		"run_id":           a.RunID,
		"call_id":          a.CallID,
		"delegation_depth": a.DelegationDepth,
		"args":             json.RawMessage(canonArgs),
		"envelope":         a.Envelope,
		"created_at":       stamp(a.CreatedAt),
		"expires_at":       stamp(a.ExpiresAt),
	})
	if err != nil {
		return "", fmt.Errorf("hash action: %w", err)
	}
	return key.Seal("action", string(body)), nil
}

// storableEnvelope is env as the database can keep it and the owner reads it: a NUL byte
// (which jsonb refuses) or invalid UTF-8 in any of its strings becomes U+FFFD, and in what the
// card shows (summary, targets, preview, choices) every character no reader could see is
// written as a visible mark (readable.Reveal), so nothing rides along in an approval unseen.
// The detail, which the tool may read back, stays as described. Hash applies it, so the
// envelope read back, or described again at dispatch, hashes as the one proposed.
func storableEnvelope(env plugins.Envelope) plugins.Envelope {
	return shown(storableJSON(env))
}

// storableJSON is env with every string as jsonb can keep it.
func storableJSON(env plugins.Envelope) plugins.Envelope {
	raw, err := json.Marshal(env)
	if err != nil {
		return env
	}
	clean := redact.StorableJSON(raw)
	if len(clean) == len(raw) && string(clean) == string(raw) {
		return env
	}
	var out plugins.Envelope
	if json.Unmarshal(clean, &out) != nil {
		return env
	}
	return out
}

// shown is env with what the card shows revealed; env's slices are copied, not changed.
func shown(env plugins.Envelope) plugins.Envelope {
	env.Summary = readable.Reveal(env.Summary)
	env.Preview = readable.Reveal(env.Preview)
	if env.Targets != nil {
		targets := make([]string, len(env.Targets))
		for i, t := range env.Targets {
			targets[i] = readable.Reveal(t)
		}
		env.Targets = targets
	}
	if env.Choices != nil {
		choices := make([]plugins.Choice, len(env.Choices))
		for i, c := range env.Choices {
			c.Name, c.Default = readable.Reveal(c.Name), readable.Reveal(c.Default)
			if c.Options != nil {
				opts := make([]string, len(c.Options))
				for j, o := range c.Options {
					opts[j] = readable.Reveal(o)
				}
				c.Options = opts
			}
			choices[i] = c
		}
		env.Choices = choices
	}
	return env
}

// stamp spells an instant as the database keeps it: UTC, to the microsecond.
func stamp(t time.Time) string { return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano) }

// newID returns a random (version 4) UUID: an action's id is made before its row, since the
// seal covers it.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Proposal is what Create needs.
type Proposal struct {
	// Call is the proposed call; its Now, when set, becomes the action's CreatedAt.
	Call plugins.Call
	// Version is the version of the plugin that contributes the tool.
	Version string
	// Envelope is what Describe rendered for the call.
	Envelope plugins.Envelope
	// TTL is how long the action waits for a decision; default DefaultTTL.
	TTL time.Duration
	// Reason says why the call needs an approval (the tier decision), for the event log.
	Reason string
}

// Create records an action and its pending approval in tx, with an action.proposed event.
// The action is sealed with key.
func Create(ctx context.Context, tx pgx.Tx, key seal.Key, p Proposal) (Record, error) {
	args, err := canonical.JSON(p.Call.Args)
	if err != nil {
		return Record{}, fmt.Errorf("create action for %s: arguments: %w", p.Call.Tool, err)
	}
	args = redact.StorableJSON(args) // a NUL escape, which jsonb refuses, becomes U+FFFD
	p.Envelope = storableEnvelope(p.Envelope)
	if p.TTL <= 0 {
		p.TTL = DefaultTTL
	}
	created := p.Call.Now // the call's clock is the action's creation time, when the caller set one
	if created.IsZero() {
		created = time.Now()
	}
	created = created.UTC().Truncate(time.Microsecond)
	a := Action{ID: newID(), Tool: p.Call.Tool, ToolVersion: p.Version, Agent: p.Call.Agent, ConversationID: p.Call.ConversationID,
		RunID: p.Call.RunID, CallID: p.Call.CallID, DelegationDepth: p.Call.DelegationDepth, Args: args, Envelope: p.Envelope,
		PolicyVersion: PolicyVersion, CreatedAt: created, ExpiresAt: created.Add(p.TTL).Truncate(time.Microsecond)}
	if a.Hash, err = Hash(key, a); err != nil {
		return Record{}, err
	}
	env, err := json.Marshal(p.Envelope)
	if err != nil {
		return Record{}, fmt.Errorf("create action for %s: envelope: %w", p.Call.Tool, err)
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO core.actions (id, tool, tool_version, agent, conversation_id, run_id, delegation_depth,
		                          args, envelope, policy_version, hash, expires_at, created_at, call_id)
		VALUES ($1, $2, $3, $4, NULLIF($5, '')::uuid, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		a.ID, a.Tool, a.ToolVersion, a.Agent, a.ConversationID, a.RunID, a.DelegationDepth,
		string(args), string(env), PolicyVersion, a.Hash, a.ExpiresAt, a.CreatedAt, a.CallID)
	if err != nil {
		return Record{}, fmt.Errorf("create action for %s: %w", p.Call.Tool, err)
	}
	id := a.ID
	if _, err := tx.Exec(ctx, `INSERT INTO core.approvals (action_id) VALUES ($1)`, id); err != nil {
		return Record{}, fmt.Errorf("create approval for action %s: %w", id, err)
	}
	if _, err := eventlog.Append(ctx, tx, events.ActionProposed, p.Call.ConversationID, events.ActionProposedPayload{
		ActionID: id, Tool: p.Call.Tool, Version: p.Version, Agent: p.Call.Agent,
		RunID: p.Call.RunID, Hash: a.Hash, Summary: p.Envelope.Summary, Reason: p.Reason,
	}); err != nil {
		return Record{}, err
	}
	return Get(ctx, tx, id)
}

// ErrNotFound means no action has that id.
var ErrNotFound = errors.New("action: not found")

const selectRecord = `
	SELECT a.id, a.tool, a.tool_version, a.agent, COALESCE(a.conversation_id::text, ''), a.run_id, a.call_id,
	       a.delegation_depth, a.args, a.envelope, a.policy_version, a.hash, a.expires_at, a.created_at,
	       p.state, COALESCE(p.decided_by, ''), p.decided_at, p.picks, p.reason, p.result, p.updated_at, p.decision_seal
	FROM core.actions a JOIN core.approvals p ON p.action_id = a.id`

func scanRecord(row pgx.Row) (Record, error) {
	var r Record
	var env []byte
	err := row.Scan(&r.ID, &r.Tool, &r.ToolVersion, &r.Agent, &r.ConversationID, &r.RunID, &r.CallID,
		&r.DelegationDepth, &r.Args, &env, &r.PolicyVersion, &r.Hash, &r.ExpiresAt, &r.CreatedAt,
		&r.Approval.State, &r.Approval.DecidedBy, &r.Approval.DecidedAt, &r.Approval.Picks,
		&r.Approval.Reason, &r.Approval.Result, &r.Approval.UpdatedAt, &r.Approval.Seal)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(env, &r.Envelope); err != nil {
		return r, fmt.Errorf("action %s: envelope: %w", r.ID, err)
	}
	return r, nil
}

// Get reads one action with its approval.
func Get(ctx context.Context, q eventlog.Querier, id string) (Record, error) {
	if !text.ValidUUID(id) {
		return Record{}, fmt.Errorf("action %q: %w", id, ErrNotFound)
	}
	r, err := scanRecord(q.QueryRow(ctx, selectRecord+` WHERE a.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, fmt.Errorf("action %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("read action %s: %w", id, err)
	}
	return r, nil
}

// Filter selects records for List; the zero value lists the latest 50 of any state.
type Filter struct {
	States []State // only these states; empty: any state
	Limit  int     // 1 to 500; anything else gives 50
}

// List returns records newest first.
func List(ctx context.Context, q eventlog.Querier, f Filter) ([]Record, error) {
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 50
	}
	states := make([]string, len(f.States))
	for i, s := range f.States {
		states[i] = string(s)
	}
	rows, err := q.Query(ctx, selectRecord+`
		WHERE cardinality($1::text[]) = 0 OR p.state = ANY($1)
		ORDER BY a.created_at DESC, a.id LIMIT $2`, states, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("list actions: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Preview renders the owner's card from the action alone (never from model text): the
// summary, the tool's preview, the targets, the choices and what the approval binds.
func (r Record) Preview() string { return r.PreviewBy(r.Agent) }

// PreviewBy is Preview naming the agent that asked as asker (its handle, where the caller
// knows it).
func (r Record) PreviewBy(asker string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Envelope.Summary)
	fmt.Fprintf(&b, "tool %s %s, asked by %s; %s until %s\n", r.Tool, r.ToolVersion, asker, r.Approval.State, r.ExpiresAt.Local().Format("2006-01-02 15:04"))
	if len(r.Envelope.Effects) > 0 {
		effects := make([]string, len(r.Envelope.Effects))
		for i, e := range r.Envelope.Effects {
			effects[i] = string(e)
		}
		fmt.Fprintf(&b, "effects: %s\n", strings.Join(effects, ", "))
	}
	if len(r.Envelope.Targets) > 0 {
		fmt.Fprintf(&b, "targets: %s\n", strings.Join(r.Envelope.Targets, ", "))
	}
	if r.Envelope.Preview != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(r.Envelope.Preview, "\n"))
	}
	for _, c := range r.Envelope.Choices {
		def := ""
		if c.Default != "" {
			def = " (default " + c.Default + ")"
		}
		fmt.Fprintf(&b, "\nchoose %s: %s%s", c.Name, strings.Join(c.Options, " | "), def)
	}
	for _, p := range r.Envelope.Preconditions {
		fmt.Fprintf(&b, "\nrequires %s = %s", p.What, p.Value)
	}
	fmt.Fprintf(&b, "\nhash %s (policy %d)\n", r.Hash, r.PolicyVersion)
	return b.String()
}

// ByCall returns the action a run's call became, if any: found reports whether one exists.
// A rerun asks before proposing a call again, so a call becomes at most one action.
func ByCall(ctx context.Context, q eventlog.Querier, runID, callID string) (rec Record, found bool, err error) {
	if runID == "" || callID == "" {
		return Record{}, false, nil
	}
	r, err := scanRecord(q.QueryRow(ctx, selectRecord+` WHERE a.run_id = $1 AND a.call_id = $2`, runID, callID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("read the action of call %s in run %s: %w", callID, runID, err)
	}
	return r, true, nil
}
