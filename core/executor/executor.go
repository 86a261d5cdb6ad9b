package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"buddi/core/action"
	"buddi/core/canonical"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/permission"
	"buddi/core/redact"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/internal/text"
	"buddi/metrics"
	"buddi/plugins"
)

// Inserter puts a job in the queue inside a transaction (a River client, insert-only is enough).
type Inserter interface {
	// InsertTx enqueues a job with args and opts (nil for the job's own) as part of tx.
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Executor authorizes and performs effects.
type Executor struct {
	pool  *pgxpool.Pool
	reg   *registry.Registry
	queue Queue
	log   *slog.Logger
	// Now is the clock for session checks; default time.Now.
	Now func() time.Time
	// Policy, when set, gives the permission engine's inputs for a call (the agent's view and
	// the merged settings); its answer can only make a call stricter: allow leaves the
	// registry's tier, prompt makes it gated, block refuses with the engine's reason. An
	// error refuses the call: a policy that cannot be read never allows.
	Policy func(ctx context.Context, call plugins.Call) (permission.Agent, permission.Settings, error)
	// Scrub, when set, removes every stored secret from what leaves the executor: the result
	// the model reads, and the error text kept in events, approvals and the ledger.
	Scrub redact.Scrubber
	// Seal is the installation's key: actions, decisions and standing permissions are sealed
	// with it and checked before dispatch. The zero key gates nothing through: a gated call
	// cannot become an action and nothing approved executes.
	Seal seal.Key
	// OutcomeWait bounds how long the outcome of a dispatched effect is held in memory while
	// the database cannot take it: the write is retried with backoff until the database
	// answers, this has passed, or the caller's context ends. Default 2 minutes.
	OutcomeWait time.Duration

	// attemptTimeout bounds one write of an outcome (a stopped server answers nothing);
	// default 10 s. Tests shorten it.
	attemptTimeout time.Duration
	// onRetry, when set, is told of each write of an outcome that failed and is retried: a
	// signal for tests.
	onRetry func(what string, err error)
}

// scrubbed is an error whose text has had the secrets taken out; the cause stays reachable.
type scrubbed struct {
	text  string
	cause error
}

func (s scrubbed) Error() string { return s.text }
func (s scrubbed) Unwrap() error { return s.cause }

// run performs call through the registry and scrubs the outcome. A NUL in it (binary
// output) becomes U+FFFD, so that the result, the transcript, the ledger and the events can
// store it.
func (e *Executor) run(ctx context.Context, call plugins.Call, approved *plugins.Envelope) registry.Outcome {
	out := e.reg.Run(ctx, call, approved)
	out.Result.Text = redact.Storable(out.Result.Text)
	out.Result.Data = redact.StorableJSON(out.Result.Data)
	if out.Err != nil && redact.Storable(out.Err.Error()) != out.Err.Error() {
		out.Err = scrubbed{text: redact.Storable(out.Err.Error()), cause: out.Err}
	}
	if e.Scrub == nil {
		return out
	}
	out.Result.Text = e.Scrub.String(out.Result.Text)
	if len(out.Result.Data) > 0 {
		out.Result.Data = e.Scrub.JSON(out.Result.Data)
	}
	if out.Err != nil {
		out.Err = scrubbed{text: e.Scrub.String(out.Err.Error()), cause: out.Err}
	}
	return out
}

// New returns an executor over the registry, storing in pool and enqueueing in queue.
func New(pool *pgxpool.Pool, reg *registry.Registry, queue Queue, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Executor{pool: pool, reg: reg, queue: queue, log: log.With("service", "executor"), Now: time.Now}
}

// Proposed is what became of a proposed call.
type Proposed struct {
	// Tier is the tier the call was treated at ("" when refused).
	Tier plugins.Tier `json:"tier,omitempty"`
	// Result is the tool's result when the call ran at once.
	Result *plugins.Result `json:"result,omitempty"`
	// Action is the action a gated call became.
	Action *action.Record `json:"action,omitempty"`
	// Refusal says why the call was refused, as a sentence for the model.
	Refusal string `json:"refusal,omitempty"`
}

// Propose passes call through the gate. A refusal is not a Go error: it is Proposed.Refusal,
// for the model. Errors are infrastructure faults.
func (e *Executor) Propose(ctx context.Context, call plugins.Call) (Proposed, error) {
	res, err := e.reg.Resolve(ctx, call, e.Now())
	if err != nil {
		return e.refuse(ctx, call, err)
	}
	if e.Policy != nil {
		tier, why, refusal := e.policyTier(ctx, call, res.Tool, res.Spec, res.Args, res.Tier)
		if refusal != nil {
			return e.refuse(ctx, call, refusal)
		}
		res.Tier = tier
		res.Reason = strings.TrimPrefix(res.Reason+"; "+why, "; ")
	}
	switch res.Tier {
	case plugins.TierAuto, plugins.TierSession:
		return e.runNow(ctx, call, res)
	case plugins.TierGated:
		return e.gate(ctx, call, res)
	}
	return e.refuse(ctx, call, fmt.Errorf("tier %q is not executable", res.Tier))
}

// Permits reports whether call would run at once: the registry resolves it at the auto
// tier and the permission engine (when set) neither refuses it nor asks the owner. It is
// what a capability standing in for a tool must pass before it is offered (the provider's
// own web search for web.search), so it never goes around a grant, a network policy or a
// mode. Nothing is recorded; anything that cannot be judged is false.
func (e *Executor) Permits(ctx context.Context, call plugins.Call) bool {
	res, err := e.reg.Resolve(ctx, call, e.Now())
	if err != nil || res.Tier != plugins.TierAuto {
		return false
	}
	if e.Policy == nil {
		return true
	}
	tier, _, refusal := e.policyTier(ctx, call, res.Tool, res.Spec, res.Args, res.Tier)
	return refusal == nil && tier == plugins.TierAuto
}

// policyTier applies the permission engine to a call of tool (with spec and its decoded
// args) that the registry put at tier: the tier, the engine's reason, or a refusal.
func (e *Executor) policyTier(ctx context.Context, call plugins.Call, tool plugins.Tool, spec plugins.Spec, args map[string]any, tier plugins.Tier) (plugins.Tier, string, error) {
	agent, settings, err := e.Policy(ctx, call)
	if err != nil {
		return "", "", &registry.Refusal{Code: CodePolicyBlocked, Tool: call.Tool, Reason: "the permission policy could not be read, so the call is refused", Err: err}
	}
	pc := permission.Call{Tool: call.Tool, Effects: spec.Effects, Args: args, Hosts: e.reg.Hosts(call.Tool)}
	if pd, ok := tool.(plugins.PolicyDescriber); ok {
		facts := pd.PolicyFacts(call)
		pc.Shell, pc.Edit, pc.Paths = facts.Shell, facts.Edit, facts.Paths
	}
	d := permission.Evaluate(pc, agent, settings)
	policy, ok := d.Tier()
	if !ok {
		return "", "", &registry.Refusal{Code: CodePolicyBlocked, Tool: call.Tool, Reason: d.Reason}
	}
	if policy == plugins.TierGated {
		return plugins.TierGated, d.Reason, nil // prompt: an approval card, whatever the registry allowed
	}
	return tier, d.Reason, nil
}

// CodePolicyBlocked is the refusal code of a call the permission engine blocked.
const CodePolicyBlocked registry.Code = "policy-blocked"

func (e *Executor) refuse(ctx context.Context, call plugins.Call, err error) (Proposed, error) {
	var ref *registry.Refusal
	code, reason := "refused", err.Error()
	if errors.As(err, &ref) {
		code, reason = string(ref.Code), ref.Reason
	}
	if _, aerr := eventlog.Append(ctx, e.pool, events.ToolRefused, call.ConversationID, events.ToolRefusedPayload{
		Tool: call.Tool, Agent: call.Agent, RunID: call.RunID, Code: code, Reason: reason,
	}); aerr != nil {
		return Proposed{}, aerr
	}
	metrics.ToolCall("", "refused")
	return Proposed{Refusal: reason}, nil
}

// runNow executes an auto or session call: the same ledger, nothing to wait for.
func (e *Executor) runNow(ctx context.Context, call plugins.Call, res registry.Resolution) (Proposed, error) {
	if _, err := eventlog.Append(ctx, e.pool, events.ToolCalled, call.ConversationID, events.ToolCalledPayload{
		Tool: call.Tool, Agent: call.Agent, RunID: call.RunID, CallID: call.CallID, Tier: string(res.Tier), Reason: res.Reason,
	}); err != nil {
		return Proposed{}, err
	}
	g := &gate{record: func(ctx context.Context) (int64, bool, error) {
		id, err := recordDirectAttempt(ctx, e.pool, call)
		return id, true, err
	}}
	d, err := e.execute(ctx, g, call, nil)
	if err != nil {
		return Proposed{}, err
	}
	out, reason := d.out, ""
	metrics.ToolCall(string(res.Tier), string(out.Status))
	if out.Err != nil {
		reason = text.FirstLine(out.Err.Error())
	}
	tries := 0
	err = e.persist(ctx, fmt.Sprintf("the outcome of %s (call %s of run %s)", call.Tool, call.CallID, call.RunID), func(ctx context.Context) error {
		tries++
		return pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			if d.attempt != 0 {
				if finished, err := finishAttempt(ctx, tx, d.attempt, action.State(out.Status), reason); err != nil || !finished {
					return err
				}
			} else if tries > 1 { // nothing began, so no attempt tells whether an earlier try was committed
				if recorded, err := resultRecorded(ctx, tx, call); err != nil || recorded {
					return err
				}
			}
			if out.Status == registry.StatusUnknown {
				if err := appendUnknownCall(ctx, tx, call.ConversationID, d.attempt, call.Tool, call.RunID, call.CallID, reason); err != nil {
					return err
				}
			}
			return e.recordResult(ctx, tx, call, "", out)
		})
	})
	if err != nil {
		return Proposed{}, err
	}
	return Proposed{Tier: res.Tier, Result: &out.Result}, nil
}

// resultRecorded reports whether the outcome of call is in the event log already.
func resultRecorded(ctx context.Context, q eventlog.Querier, call plugins.Call) (bool, error) {
	if call.RunID == "" || call.CallID == "" {
		return false, nil
	}
	var found bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.events WHERE kind = $3
		AND payload->>'run_id' = $1 AND payload->>'call_id' = $2)`, call.RunID, call.CallID, events.ToolResult).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("read the outcome of call %s: %w", call.CallID, err)
	}
	return found, nil
}

// appendUnknownCall records an auto or session call whose outcome is unknown (it timed out
// after its effect began, or buddi stopped while it ran) as an action.unknown event, for the
// owner's review, as an approved action's own transition to unknown is.
func appendUnknownCall(ctx context.Context, q eventlog.Querier, conversationID string, attempt int64, tool, runID, callID, reason string) error {
	_, err := eventlog.Append(ctx, q, events.ActionUnknown, conversationID, events.ActionUnknownPayload{
		Attempt: attempt, Tool: tool, RunID: runID, CallID: callID, Reason: reason,
	})
	return err
}

func (e *Executor) recordResult(ctx context.Context, q eventlog.Querier, call plugins.Call, actionID string, out registry.Outcome) error {
	payload := events.ToolResultPayload{Tool: call.Tool, Agent: call.Agent, RunID: call.RunID, CallID: call.CallID,
		Status: string(out.Status), IsError: out.Result.IsError, ActionID: actionID}
	if out.Err != nil {
		e.log.Warn("tool did not succeed", "tool", call.Tool, "status", out.Status, "err", out.Err)
		payload.Error = text.FirstLine(out.Err.Error())
	}
	_, err := eventlog.Append(ctx, q, events.ToolResult, call.ConversationID, payload)
	return err
}

// gate turns a gated call into an action: pending, or approved at once by a standing
// permission (rechecked again before dispatch).
func (e *Executor) gate(ctx context.Context, call plugins.Call, res registry.Resolution) (Proposed, error) {
	// Describe exactly what the action will hold and what the executor will describe again
	// before dispatch: the canonical arguments, the identity, and the proposal's clock.
	args, err := canonical.JSON(call.Args)
	if err != nil {
		return e.refuse(ctx, call, err)
	}
	call.Args = args
	call.Now = e.Now().UTC().Truncate(time.Microsecond) // Postgres keeps microseconds
	call.Owner, call.Granted, call.Picks = nil, false, nil
	env, err := e.reg.Describe(ctx, call)
	if err != nil {
		return e.refuse(ctx, call, err)
	}
	var rec action.Record
	err = pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		// A rerun of the run proposes the same call again: it is the action it already became.
		if prior, found, err := action.ByCall(ctx, tx, call.RunID, call.CallID); err != nil || found {
			rec = prior
			return err
		}
		if rec, err = action.Create(ctx, tx, e.Seal, action.Proposal{Call: call, Version: res.Version, Envelope: env, Reason: res.Reason}); err != nil {
			return err
		}
		if !res.Spec.ReusableApproval {
			return nil
		}
		standing, ok, err := action.Covering(ctx, tx, e.Seal, call, res.Version)
		if err != nil || !ok {
			return err
		}
		approved, err := action.ApproveByStanding(ctx, tx, e.Seal, rec.ID, standing)
		if errors.Is(err, action.ErrBadPick) {
			return nil // a choice without a default waits for the owner
		}
		if err != nil {
			return err
		}
		rec = approved
		return e.enqueue(ctx, tx, rec.ID)
	})
	if err != nil {
		return Proposed{}, fmt.Errorf("gate %s: %w", call.Tool, err)
	}
	return Proposed{Tier: plugins.TierGated, Action: &rec}, nil
}

func (e *Executor) enqueue(ctx context.Context, tx pgx.Tx, id string) error {
	return Enqueue(ctx, tx, e.queue, id)
}

// Enqueue puts the job that executes an approved action in tx, once per action.
func Enqueue(ctx context.Context, tx pgx.Tx, insert Inserter, id string) error {
	if _, err := insert.InsertTx(ctx, tx, ExecuteArgs{ActionID: id}, nil); err != nil {
		return fmt.Errorf("enqueue execution of action %s: %w", id, err)
	}
	return nil
}

// Decide records the owner's decision, sealed with key, and, for an approval, enqueues the
// execution in the same transaction, so an approval is never left without its job; with
// d.Remember it also grants the standing permission, which needs tools to know the tool opted
// in and is refused (action.ErrBadRemember) for an action of a delegated run. A decision on an action past its expiry marks the due actions expired and returns
// action.ErrExpired. A decision on an action that is not buddi's own (its seal does not
// check) refuses the action, records action.forged and returns an error matching
// action.ErrForged.
func Decide(ctx context.Context, pool *pgxpool.Pool, queue Queue, tools *registry.Registry, key seal.Key, d action.Decision) (action.Record, error) {
	var rec action.Record
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		if rec, err = action.Decide(ctx, tx, key, d); err != nil {
			return err
		}
		if !d.Approve {
			return EnqueueResume(ctx, tx, queue, rec)
		}
		if d.Remember != action.RememberNone {
			if err := remember(ctx, tx, tools, key, rec, d); err != nil {
				return err
			}
		}
		return Enqueue(ctx, tx, queue, d.ActionID)
	})
	var forged *action.ForgedError
	if errors.As(err, &forged) {
		if xerr := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			refused, moved, err := action.RefuseForged(ctx, tx, forged.ActionID, forged.Why)
			if err != nil || !moved {
				return err
			}
			rec = refused
			return EnqueueResume(ctx, tx, queue, refused)
		}); xerr != nil {
			return rec, errors.Join(err, fmt.Errorf("refuse a forged action: %w", xerr))
		}
	}
	if errors.Is(err, action.ErrExpired) {
		if xerr := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return ExpireDue(ctx, tx, queue)
		}); xerr != nil {
			return rec, errors.Join(err, fmt.Errorf("mark expired actions: %w", xerr))
		}
	}
	return rec, err
}

// remember grants the standing permission an approval asked for.
func remember(ctx context.Context, tx pgx.Tx, tools *registry.Registry, key seal.Key, rec action.Record, d action.Decision) error {
	if tools == nil {
		return fmt.Errorf("remember %s: %w", rec.Tool, action.ErrNotReusable)
	}
	if rec.DelegationDepth > 0 {
		// A standing permission never covers a delegate's call (action.Covering), so one
		// remembered from a delegate's card would not cover what the owner is looking at.
		return fmt.Errorf("remember %s: the card was raised inside a delegation, which a standing permission never covers, so approve it once: %w", rec.Tool, action.ErrBadRemember)
	}
	var spec plugins.Spec
	for _, s := range tools.Tools() {
		if s.Name == rec.Tool {
			spec = s
		}
	}
	conv := ""
	switch d.Remember {
	case action.RememberConversation:
		if rec.ConversationID == "" {
			return fmt.Errorf("remember %s for this conversation: the action belongs to none, remember it for all: %w", rec.Tool, action.ErrBadRemember)
		}
		conv = rec.ConversationID
	case action.RememberAll:
	default:
		return fmt.Errorf("remember %q: %w", d.Remember, action.ErrBadRemember)
	}
	_, err := action.Grant(ctx, tx, key, spec, rec.ToolVersion, rec.Agent, conv, d.Surface)
	return err
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"error":"unencodable result"}`)
	}
	return b
}
