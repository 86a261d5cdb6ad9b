package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/agents"
	"buddi/core/action"
	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
	"buddi/core/redact"
	"buddi/core/registry"
	"buddi/core/vault"
	"buddi/core/views"
	"buddi/internal/text"
	"buddi/metrics"
	"buddi/plugins"
	"buddi/runtime/account"
	"buddi/runtime/live"
	"buddi/runtime/provider"
	"buddi/runtime/transport"
)

// Host runs a turn as the run actor of its conversation (supervisor.ConversationHost).
type Host interface {
	// Run runs turn as run runID of conversation, after the conversation's earlier turns. A
	// turn whose code crashed past its actor's restart budget ends with an error that has a
	// method RunCrashed() (restarts int, reason string).
	Run(ctx context.Context, conversation, runID string, turn func(ctx context.Context) error) error
}

// Secrets is what the runner reads from the vault.
type Secrets interface {
	// Get returns the value stored under name.
	Get(name string) (string, error)
}

// Runner runs turns. Every field but Live, Log and Now is required.
type Runner struct {
	Pool          *pgxpool.Pool                   // the application's database
	Conversations *conversation.Store             // transcripts and pending input
	Executor      *executor.Executor              // the one gate every call goes through
	Tools         *registry.Registry              // what the model is offered
	Catalog       func() (*agents.Catalog, error) // the agents, loaded for each run
	Accounts      *account.Store                  // provider accounts and assignments
	Secrets       Secrets                         // the vault
	Scrub         redact.Scrubber                 // takes stored secrets out of what leaves
	Transport     transport.Config                // the one outbound transport's settings
	Insert        executor.Inserter               // enqueues the next run
	Host          Host                            // the conversation and run actors
	Live          *live.Hub                       // where streamed events go; nil sends none
	Log           *slog.Logger                    // nil discards
	Now           func() time.Time                // nil is time.Now
	// DefaultTurnBudget bounds the model steps of a run whose agent declares none.
	DefaultTurnBudget int
	// CallTimeout bounds one model call, its retries included. Default 5 minutes.
	CallTimeout time.Duration
	// Delay, when set, maps the wait before a retried attempt (tests shorten it).
	Delay func(time.Duration) time.Duration
	// Finished, when set, hears every run that ended with its last words (a mission's run
	// that decided nothing is settled there).
	// The last words are read only when asked for.
	Finished func(ctx context.Context, m Meta, lastText func() string)
	// Colleagues, when set, says in a paragraph of the system prompt whom agent a may hand a
	// question to (agent.delegate, read from its delegates.json at each step); "" says nothing.
	Colleagues func(a agents.Agent) string
	// Asked, when set, hears every approval an unattended run waits on (a mission's, a
	// reminder's, a watcher's): nobody follows such a run, so the owner must be told.
	Asked func(ctx context.Context, m Meta, rec action.Record)
	// Paused, when set, says whether the owner paused all work: Deliver then leaves a run to
	// its job, which waits in the paused queue.
	Paused func(ctx context.Context, q eventlog.Querier) (bool, error)
	// Unattended names the tools every unattended run is offered whatever its agent's grant
	// (mission.report, mission.silent).
	Unattended []string
	// Search, when set, lets an agent granted web.search search with its provider's own web
	// search on a wire that offers it, and records each such search; nil offers web.search
	// as a tool only.
	Search NativeSearch

	cleared sync.Map // run ids StartNow enqueued while work was not paused, until delivered
}

// Meta is what a run pinned when it started, read back from its run.started event: its
// fields are events.RunStartedPayload's, converted both ways.
type Meta struct {
	RunID          string `json:"run_id"`          // the run
	ConversationID string `json:"conversation_id"` // its conversation
	Agent          string `json:"agent"`           // the agent's id
	Account        string `json:"account"`         // the provider account it is pinned to
	Model          string `json:"model"`           // the model it is pinned to
	Wire           string `json:"wire"`            // the account's wire, for the record
	Surface        string `json:"surface"`         // where the owner wrote; empty when unattended
	Interactive    bool   `json:"interactive"`     // somebody waits: the short retry horizon
	// DelegatedBy is the agent that asked for this run through agent.delegate; empty for a
	// run the owner, a mission or a wake started.
	DelegatedBy string `json:"delegated_by,omitempty"`
	// Depth is how many delegations deep the run is: 0 for one the owner started, 1 for a
	// colleague's run asked from it, and so on. Its calls carry it (plugins.Call's
	// DelegationDepth), so neither a standing permission nor the session tier applies.
	Depth int `json:"depth,omitempty"`
	// Chain is every agent that asked on the way down, the first asker first (its last is
	// DelegatedBy): an approval raised in this run counts for each of them.
	Chain []string `json:"chain,omitempty"`
	// AskedIn is the asking run's conversation, for a delegated run.
	AskedIn string `json:"asked_in,omitempty"`
	// AskedRun is the asking run, for a delegated run.
	AskedRun string `json:"asked_run,omitempty"`
	// Origin is the surface the first request on the way down came from, for a delegated
	// run: its calls are judged as that surface's (a Telegram or buddi mcp request handed on
	// to a colleague stays clamped as a remote caller's).
	Origin string `json:"origin,omitempty"`
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

func (r *Runner) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func (r *Runner) publish(ev live.Event) {
	if r.Live != nil {
		r.Live.Publish(ev)
	}
}

// textStream returns a streaming redactor for a model step's text.
func (r *Runner) textStream() *redact.Stream {
	if r.Scrub == nil {
		return redact.NewStream(nil)
	}
	return r.Scrub.Stream()
}

// scrub takes every stored secret out of s.
func (r *Runner) scrub(s string) string {
	if r.Scrub == nil {
		return s
	}
	return r.Scrub.String(s)
}

// opening is what a turn starts from, read in one transaction.
type opening struct {
	m        Meta                 // the run, pinned
	inFlight bool                 // it is its conversation's run in flight
	entries  []conversation.Entry // the transcript, when in flight
	account  account.Account      // the pinned account, read with the rest for the first step
	accErr   error                // why it could not be read
}

// open reads, in one transaction, what the turn of run m starts from. With args (a run's
// first turn) the run is pinned first: its account and model are those recorded in its
// run.started event, or, for a run that has none yet, the agent's assignment now, recorded.
// A run never moves to another account (there is no fallback across accounts). Then, when
// it is still its conversation's run in flight, input a step leased and never delivered is
// handed back and the transcript read. A late resumption of a run whose turn was closed, or
// a second copy of a finished one, finds it not in flight.
func (r *Runner) open(ctx context.Context, m Meta, args *StartArgs) (opening, error) {
	var o opening
	started := false
	err := pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
		o, started = opening{m: m}, false
		if args != nil {
			pinned, found, err := r.readMetaIn(ctx, tx, args.RunID)
			if err != nil {
				return err
			}
			if found {
				o.m = pinned
			} else {
				o.m = Meta{RunID: args.RunID, ConversationID: args.ConversationID, Agent: args.Agent, Surface: args.Surface, Interactive: args.Interactive}
				args.Delegation.pin(&o.m)
				as, found, err := r.Accounts.AssignedIn(ctx, tx, args.Agent)
				if err != nil {
					return err
				}
				if !found {
					return noAccount(args.Agent, r.handle(args.Agent), as)
				}
				o.m.Account, o.m.Model = as.Account, as.Model
				o.account, o.accErr = r.Accounts.GetIn(ctx, tx, as.Account)
				if o.accErr == nil {
					o.m.Wire = string(o.account.Wire)
				}
				if _, err := eventlog.Append(ctx, tx, events.RunStarted, o.m.ConversationID, events.RunStartedPayload(o.m)); err != nil {
					return err
				}
				started = true
			}
		}
		if !started {
			o.account, o.accErr = r.Accounts.GetIn(ctx, tx, o.m.Account)
		}
		var err error
		o.entries, o.inFlight, err = r.Conversations.Open(ctx, tx, o.m.ConversationID, o.m.RunID)
		return err
	})
	if err != nil {
		return o, err
	}
	if started {
		metrics.RunStarted()
		r.publish(live.Event{ConversationID: o.m.ConversationID, RunID: o.m.RunID, Type: "run.started", Tool: o.m.Agent})
	}
	return o, nil
}

func (r *Runner) readMeta(ctx context.Context, runID string) (Meta, bool, error) {
	return r.readMetaIn(ctx, r.Pool, runID)
}

func (r *Runner) readMetaIn(ctx context.Context, q eventlog.Querier, runID string) (Meta, bool, error) {
	var m Meta
	var payload []byte
	err := q.QueryRow(ctx, `SELECT payload FROM core.events WHERE payload->>'run_id' = $1
		AND kind = $2 ORDER BY id LIMIT 1`, runID, events.RunStarted).Scan(&payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read run %s: %w", runID, err)
	}
	var p events.RunStartedPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return m, false, fmt.Errorf("read run %s: %w", runID, err)
	}
	return Meta(p), true, nil
}

// provider builds the run's provider from its pinned account, read fresh (or read in this
// turn's opening, when read is given): a disabled account or a missing credential stops the
// call with a typed problem.
func (r *Runner) provider(ctx context.Context, m Meta, read *opening) (provider.Provider, error) {
	var a account.Account
	var secret string
	var err error
	if read != nil {
		a, secret, err = usable(r.Secrets, m.Agent, r.handle(m.Agent), m.Account, read.account, read.accErr)
	} else {
		a, secret, err = credential(ctx, r.Accounts, r.Secrets, m.Agent, r.handle(m.Agent), m.Account)
	}
	if err != nil {
		return nil, err
	}
	p, err := account.New(a, secret, r.Transport)
	if err != nil {
		return nil, &Problem{Kind: "bad-account", Agent: m.Agent, Err: err, Sentence: "This agent's model account is not usable as configured: " + err.Error()}
	}
	return p, nil
}

// credential reads the account name and its secret, or says in a typed problem why the agent
// (named handle to the owner) cannot use it.
func credential(ctx context.Context, accounts *account.Store, secrets Secrets, agent, handle, name string) (account.Account, string, error) {
	a, err := accounts.Get(ctx, name)
	return usable(secrets, agent, handle, name, a, err)
}

// usable is credential for the account name as read (a, or the error of reading it).
func usable(secrets Secrets, agent, handle, name string, a account.Account, err error) (account.Account, string, error) {
	if errors.Is(err, account.ErrNotFound) {
		return a, "", &Problem{Kind: "no-account", Agent: agent, Err: err,
			Sentence: fmt.Sprintf("The model account %s no longer exists: give %s another with `buddi agents set %s --account NAME --model MODEL`.", name, handle, handle)}
	}
	if errors.Is(err, account.ErrUnsealed) {
		// Its base URL and secret name are not the owner's word: the key is not sent.
		return a, "", &Problem{Kind: "account-refused", Agent: agent, Err: err,
			Sentence: fmt.Sprintf("The model account %s is refused (%s), so its key is not sent: %s.", name, a.Refused, account.Fix(name))}
	}
	if err != nil {
		return a, "", err
	}
	if !a.Enabled {
		return a, "", &Problem{Kind: "account-disabled", Agent: agent,
			Sentence: fmt.Sprintf("The model account %s is disabled: enable it with `buddi accounts enable %s`.", a.Name, a.Name)}
	}
	secret, err := secrets.Get(a.SecretName)
	if err != nil {
		kind, sentence := "no-credential", fmt.Sprintf("The model account %s needs the vault entry %s: set it with `buddi vault set %s`.", a.Name, a.SecretName, a.SecretName)
		if errors.Is(err, vault.ErrLocked) {
			kind, sentence = "vault-locked", "The vault is locked, so the model account's key cannot be read: start buddi with BUDDI_VAULT_KEY set."
		}
		return a, "", &Problem{Kind: kind, Agent: agent, Err: err, Sentence: sentence}
	}
	return a, secret, nil
}

// noAccount is the problem of an agent (its id, and the handle the owner knows it by) with
// no model account assigned, or with an assignment buddi did not seal (as.Refused).
func noAccount(agent, handle string, as account.Assignment) *Problem {
	if as.Refused != "" {
		return &Problem{Kind: "account-refused", Agent: agent,
			Sentence: fmt.Sprintf("%s's model account assignment is refused (%s): %s.", handle, as.Refused, account.FixAssignment(handle))}
	}
	return &Problem{Kind: "no-account", Agent: agent,
		Sentence: fmt.Sprintf("%s has no model account yet: give it one with `buddi agents set %s --account NAME --model MODEL`.", handle, handle)}
}

// Check says whether agent can run now: it has an account and model, the account is enabled
// and its credential is in the vault. A problem is typed and says what to do; a nil problem
// with a nil error means it can run. Its sentence names the agent by its handle, as the
// owner knows it.
func Check(ctx context.Context, accounts *account.Store, secrets Secrets, agent agents.Agent) (*Problem, error) {
	return check(ctx, accounts, secrets, agent.ID, agent.Handle)
}

// Check is the package's Check for the agent with id, named by its handle from the
// runner's catalog.
func (r *Runner) Check(ctx context.Context, secrets Secrets, id string) (*Problem, error) {
	return check(ctx, r.Accounts, secrets, id, r.handle(id))
}

// handle is the handle of the agent with id, for the owner's sentences: the catalog's, or
// the id itself when the catalog cannot say.
func (r *Runner) handle(id string) string {
	if r.Catalog == nil {
		return id
	}
	cat, err := r.Catalog()
	if err != nil {
		return id
	}
	if a, ok := cat.ByID(id); ok && a.Handle != "" {
		return a.Handle
	}
	return id
}

func check(ctx context.Context, accounts *account.Store, secrets Secrets, agent, handle string) (*Problem, error) {
	as, found, err := accounts.Assigned(ctx, agent)
	if err != nil {
		return nil, err
	}
	if !found {
		return noAccount(agent, handle, as), nil
	}
	_, _, err = credential(ctx, accounts, secrets, agent, handle, as.Account)
	var p *Problem
	if errors.As(err, &p) {
		return p, nil
	}
	return nil, err
}

func (r *Runner) agent(m Meta) (agents.Agent, error) {
	cat, err := r.Catalog()
	if err != nil {
		return agents.Agent{}, &Problem{Kind: "no-agent", Agent: m.Agent, Err: err, Sentence: "The agents could not be loaded: run `buddi agents list` to see why."}
	}
	a, ok := cat.ByID(m.Agent)
	if !ok {
		return a, &Problem{Kind: "no-agent", Agent: m.Agent, Sentence: fmt.Sprintf("There is no agent %s any more.", m.Agent)}
	}
	return a, nil
}

// system is the agent's system prompt: its persona, its skills, whom it may delegate to
// (colleagues, when it may), and the surface's facts.
func system(a agents.Agent, surface, colleagues string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(a.Persona))
	for _, s := range a.Loaded {
		b.WriteString("\n\n## Skill: " + s.Name + "\n\n" + strings.TrimSpace(s.Body))
	}
	if colleagues != "" {
		b.WriteString("\n\n" + colleagues)
	}
	b.WriteString("\n\n" + surfaceFacts(surface))
	return b.String()
}

// colleagues is the Colleagues paragraph for a, or "".
func (r *Runner) colleagues(a agents.Agent) string {
	if r.Colleagues == nil {
		return ""
	}
	return r.Colleagues(a)
}

// tools are the model-facing tools of the agent's grant that the registry can run.
func (r *Runner) tools(a agents.Agent) []provider.Tool {
	var out []provider.Tool
	for _, s := range r.Tools.Tools() {
		if !a.HasTool(s.Name) || s.Tier == plugins.TierDraft {
			continue
		}
		out = append(out, provider.Tool{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	return out
}

// unattendedTools are the Unattended tools the agent's grant does not already give.
func (r *Runner) unattendedTools(a agents.Agent) []provider.Tool {
	var out []provider.Tool
	for _, s := range r.Tools.Tools() {
		if !a.HasTool(s.Name) && slices.Contains(r.Unattended, s.Name) {
			out = append(out, provider.Tool{Name: s.Name, Description: s.Description, Schema: s.Schema})
		}
	}
	return out
}

func (r *Runner) spec(name string) plugins.Spec {
	if t, ok := r.Tools.Lookup(name); ok {
		return t.Spec()
	}
	return plugins.Spec{}
}

// Turn runs the run m until the model stops calling tools, the run suspends on an approval,
// or it fails. It picks up wherever the transcript says the run is, so a resumed or rescued
// run continues and never repeats an answered call.
func (r *Runner) Turn(ctx context.Context, m Meta) error {
	o, err := r.open(ctx, m, nil)
	if err != nil {
		return err
	}
	return r.turnFrom(ctx, o)
}

// turnFrom is Turn from what open read.
func (r *Runner) turnFrom(ctx context.Context, o opening) error {
	m := o.m
	// Only the conversation's run in flight may speak in it.
	if !o.inFlight {
		r.log().Info("the run is no longer in flight; nothing to do", "run", m.RunID, "conversation", m.ConversationID)
		return nil
	}
	a, err := r.agent(m)
	if err != nil {
		return err
	}
	budget := a.TurnBudget
	if budget == 0 {
		budget = r.DefaultTurnBudget
	}
	if budget == 0 {
		budget = 25
	}
	first := &o // the opening's transcript and account serve the first step
	for {
		entries := o.entries
		if first == nil {
			if entries, err = r.Conversations.Transcript(ctx, m.ConversationID); err != nil {
				return err
			}
		}
		st, err := analyse(entries, m.RunID)
		if err != nil {
			return err
		}
		if st.last != nil && len(st.last.calls()) == 0 {
			return r.finish(ctx, m) // its last step answered in text: done (a rerun after the end)
		}
		if len(st.unanswered) > 0 {
			suspended, err := r.answer(ctx, m, a, st)
			if err != nil || suspended {
				return err
			}
			first = nil
			continue
		}
		if st.turns >= budget {
			return r.stopAtBudget(ctx, m, budget)
		}
		answered, err := r.step(ctx, m, a, entries, st, first)
		if err != nil {
			return err
		}
		first = nil
		if answered { // it answered in text, calling nothing: done, without reading it back
			return r.finish(ctx, m)
		}
	}
}

// step takes one model step and writes its message. answered reports that the message calls
// no tool: the turn is over.
func (r *Runner) step(ctx context.Context, m Meta, a agents.Agent, entries []conversation.Entry, st state, read *opening) (answered bool, err error) {
	p, err := r.provider(ctx, m, read)
	if err != nil {
		return false, err
	}
	var leased []conversation.Pending
	if st.last != nil { // between tool answers and the next step: input that joined the run
		if leased, err = r.Conversations.Lease(ctx, m.ConversationID, m.RunID); err != nil {
			return false, err
		}
	}
	extra := make([]string, len(leased))
	for i, l := range leased {
		extra[i] = l.Text
	}
	msgs, err := messages(entries, extra)
	if err != nil {
		return false, err
	}
	req := provider.Request{Model: m.Model, System: system(a, m.Surface, r.colleagues(a)), Messages: msgs,
		Limits: provider.Limits{Timeout: r.callTimeout()}}
	if !st.asked { // after a question, the model may only finish it in text
		req.Tools = r.tools(a)
		if !m.Interactive {
			req.Tools = append(req.Tools, r.unattendedTools(a)...)
		}
		r.offerNativeSearch(ctx, m, &req, a, p)
	}
	r.scrubRequest(&req)
	// One streaming redactor for the step's text: a secret split over deltas never reaches
	// the live hub (and so neither the dashboard, the terminal nor Telegram).
	text := r.textStream()
	showText := func(t string) {
		if t != "" {
			r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "text", Text: t})
		}
	}
	began := time.Now()
	res, err := p.Stream(ctx, req, func(ev provider.Event) {
		switch ev.Type {
		case provider.EventTextDelta:
			showText(text.Write(ev.Text))
		case provider.EventSearch: // recorded as it happens: a later failure does not undo it
			r.recordSearches(ctx, m, []provider.Search{ev.Search})
		case provider.EventWaiting: // before any text of the step: every surface says so
			at := ev.RetryAt
			r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "run.waiting", Until: &at,
				Text: fmt.Sprintf("%s buddi tries again at %s.", strings.TrimSpace(ev.Text), at.Local().Format("15:04:05"))})
		}
	})
	showText(text.Flush()) // the end of the stream, or where it was cut short
	metrics.ModelStep(m.Wire, time.Since(began), err, provider.Classify(err).String())
	if err != nil {
		if rerr := r.Conversations.Release(context.WithoutCancel(ctx), m.ConversationID); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return false, fmt.Errorf("model step of run %s: %w", m.RunID, err)
	}
	body := assistantOf(res.Message)
	if st.asked { // tools were withheld; a call anyway is dropped, not run
		body = assistantOf(provider.Message{Parts: textOnly(res.Message.Parts)})
	}
	for i := range body.Parts {
		body.Parts[i].Text = r.scrub(body.Parts[i].Text)
		if len(body.Parts[i].Args) > 0 && r.Scrub != nil {
			body.Parts[i].Args = r.Scrub.JSON(body.Parts[i].Args)
		}
	}
	wctx := context.WithoutCancel(ctx) // the step happened: what it said is kept
	err = pgx.BeginFunc(wctx, r.Pool, func(tx pgx.Tx) error {
		// The input the step saw goes first: it was part of what the model answered.
		if err := conversation.Deliver(wctx, tx, m.ConversationID, m.RunID, leased); err != nil {
			return err
		}
		if _, err := conversation.Append(wctx, tx, m.ConversationID, m.RunID, conversation.KindAssistant, body); err != nil {
			return err
		}
		_, err := eventlog.Append(wctx, tx, events.RunStep, m.ConversationID, events.RunStepPayload{
			RunID: m.RunID, StopReason: string(res.StopReason), InputTokens: res.Usage.InputTokens,
			OutputTokens: res.Usage.OutputTokens, Attempts: res.Attempts, DeliveredInput: len(leased),
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return len(body.calls()) == 0, nil
}

func textOnly(parts []provider.Part) []provider.Part {
	var out []provider.Part
	for _, p := range parts {
		if t, ok := p.(provider.Text); ok {
			out = append(out, t)
		}
	}
	return out
}

func (r *Runner) callTimeout() time.Duration {
	if r.CallTimeout > 0 {
		return r.CallTimeout
	}
	return 5 * time.Minute
}

// scrubRequest takes every stored secret out of what goes to the provider.
func (r *Runner) scrubRequest(req *provider.Request) {
	if r.Scrub == nil {
		return
	}
	sc := r.Scrub.Current() // one look at the vault for the whole request
	req.System = sc.String(req.System)
	for i, msg := range req.Messages {
		for j, part := range msg.Parts {
			switch p := part.(type) {
			case provider.Text:
				p.Text = sc.String(p.Text)
				req.Messages[i].Parts[j] = p
			case provider.ToolResult:
				p.Content = sc.String(p.Content)
				req.Messages[i].Parts[j] = p
			case provider.ToolCall:
				if len(p.Args) > 0 {
					p.Args = sc.JSON(p.Args)
				}
				req.Messages[i].Parts[j] = p
			}
		}
	}
}

// stopAtBudget ends a run that used all its model steps, saying so.
func (r *Runner) stopAtBudget(ctx context.Context, m Meta, budget int) error {
	text := fmt.Sprintf("I stopped here: this run used all of its %d model steps. Tell me to carry on if there is more to do.", budget)
	if err := pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
		_, err := conversation.Append(ctx, tx, m.ConversationID, m.RunID, conversation.KindAssistant,
			assistantBody{Parts: []partBody{{Type: "text", Text: text}}})
		return err
	}); err != nil {
		return err
	}
	r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "text", Text: text})
	return r.finish(ctx, m)
}

// answer answers the run's unanswered calls in order. It reports suspended when a call waits
// for the owner's decision: the rest are answered after the resumption.
func (r *Runner) answer(ctx context.Context, m Meta, a agents.Agent, st state) (suspended bool, err error) {
	asked := st.asked
	for _, c := range st.unanswered {
		if asked {
			if err := r.record(ctx, m, c, toolBody{Content: "Not run: the agent asked the owner a question, and everything after it waits for the answer.", IsError: true}); err != nil {
				return false, err
			}
			continue
		}
		body, wait, err := r.callOnce(ctx, m, a, c)
		if err != nil {
			return false, err
		}
		if wait != "" {
			if _, err := eventlog.Append(ctx, r.Pool, events.RunSuspended, m.ConversationID, events.RunSuspendedPayload{RunID: m.RunID, ActionID: wait}); err != nil {
				return false, err
			}
			r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "run.suspended", ActionID: wait})
			return true, nil
		}
		if err := r.record(ctx, m, c, body); err != nil {
			return false, err
		}
		asked = asked || body.Asked
	}
	return false, nil
}

// record writes one call's answer to the transcript.
func (r *Runner) record(ctx context.Context, m Meta, c provider.ToolCall, body toolBody) error {
	body.CallID, body.Tool = c.ID, c.Name
	body.Content = r.scrub(body.Content)
	if len(body.Data) > 0 && r.Scrub != nil {
		body.Data = r.Scrub.JSON(body.Data)
	}
	wctx := context.WithoutCancel(ctx)
	err := pgx.BeginFunc(wctx, r.Pool, func(tx pgx.Tx) error {
		_, err := conversation.Append(wctx, tx, m.ConversationID, m.RunID, conversation.KindTool, body)
		return err
	})
	if err != nil {
		return err
	}
	r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "tool.result", Tool: c.Name, CallID: c.ID, Text: body.Content, IsError: body.IsError, Data: body.Data,
		View: r.view(views.Input{Result: views.Result{Tool: c.Name, IsError: body.IsError, Content: body.Content, Data: body.Data}})})
	return nil
}

// view is what the canvas draws for in, with the tool's descriptor, scrubbed; nil when there
// is nothing to draw.
func (r *Runner) view(in views.Input) json.RawMessage {
	if d, ok := r.Tools.View(in.Tool); ok {
		in.Descriptor = &d
	}
	return views.Scrub(views.Resolve(in), r.Scrub)
}

// callOnce proposes one call, unless the run proposed it before: then it is answered from
// what became of it. wait is the action the run must wait for, if any.
func (r *Runner) callOnce(ctx context.Context, m Meta, a agents.Agent, c provider.ToolCall) (body toolBody, wait string, err error) {
	if rec, found, err := action.ByCall(ctx, r.Pool, m.RunID, c.ID); err != nil {
		return body, "", err
	} else if found {
		return answerFromAction(rec)
	}
	// The grant is the only thing that gives an agent a tool: a call of anything it was not
	// offered is refused before it reaches the gate.
	if !a.HasTool(c.Name) && (m.Interactive || !slices.Contains(r.Unattended, c.Name)) {
		return toolBody{Content: fmt.Sprintf("Refused: %s is not one of your tools.", c.Name), IsError: true}, "", nil
	}
	intended, err := r.intended(ctx, m.RunID, c.ID)
	if err != nil {
		return body, "", err
	}
	if intended {
		state, dispatched, err := r.directAttempt(ctx, m.RunID, c.ID)
		if err != nil {
			return body, "", err
		}
		if dispatched {
			// It ran (or may have) before buddi stopped, and its answer was lost: never again.
			if state == "succeeded" {
				return toolBody{Content: "This call ran and succeeded before buddi restarted, but its output was lost; it is not run again.",
					Asked: r.spec(c.Name).WaitsForOwner}, "", nil
			}
			return toolBody{Content: "This call was interrupted when buddi restarted: whether it took effect is unknown, and it is not run again.", IsError: true}, "", nil
		}
		// Nothing was dispatched: proposing again performs nothing twice.
	} else if _, err := eventlog.Append(ctx, r.Pool, events.RunToolIntent, m.ConversationID, events.RunToolIntentPayload{
		RunID: m.RunID, CallID: c.ID, Tool: c.Name,
	}); err != nil {
		return body, "", err
	}
	args := string(c.Args)
	if r.Scrub != nil {
		args = string(r.Scrub.JSON(c.Args))
	}
	r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "tool.call", Tool: c.Name, CallID: c.ID, Args: args})
	call := plugins.Call{Tool: c.Name, Args: c.Args, Agent: m.Agent, ConversationID: m.ConversationID, RunID: m.RunID,
		CallID: c.ID, Granted: a.HasTool(c.Name), DelegationDepth: m.Depth}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage(`{}`)
	}
	if m.Interactive && !Remote(m.Surface) && m.Depth == 0 { // a delegated run has no owner in it
		call.Owner = &plugins.OwnerRequest{Surface: m.Surface, ExpiresAt: r.now().Add(15 * time.Minute)}
	}
	surface := m.Surface
	if m.Depth > 0 {
		surface = m.Origin // a colleague's calls are judged as the first request's surface
	}
	call.Remote, call.Surface = Remote(surface), surface
	prop, err := r.Executor.Propose(ctx, call)
	if err != nil {
		return body, "", err
	}
	switch {
	case prop.Refusal != "":
		return toolBody{Content: "Refused: " + prop.Refusal, IsError: true}, "", nil
	case prop.Result != nil:
		asked := !prop.Result.IsError && r.spec(c.Name).WaitsForOwner
		return toolBody{Content: prop.Result.Text, IsError: prop.Result.IsError, Asked: asked, Data: prop.Result.Data}, "", nil
	case prop.Action != nil:
		rec := *prop.Action
		if rec.Approval.State == action.Pending {
			r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "approval", Tool: c.Name, CallID: c.ID,
				ActionID: rec.ID, Text: rec.Envelope.Summary, Preview: rec.Envelope.Preview,
				View: r.view(views.Input{Result: views.Result{Tool: c.Name}, Pending: &rec.Envelope})})
			if (!m.Interactive || Remote(m.Surface) || m.Depth > 0) && r.Asked != nil { // nobody watches a delegated run either
				r.Asked(ctx, m, rec)
			}
		}
		return answerFromAction(rec)
	}
	return body, "", fmt.Errorf("propose %s: no outcome", c.Name)
}

// answerFromAction answers a call from its action's state, or names the action to wait for.
func answerFromAction(rec action.Record) (toolBody, string, error) {
	var res plugins.Result
	if len(rec.Approval.Result) > 0 {
		_ = json.Unmarshal(rec.Approval.Result, &res)
	}
	reason := rec.Approval.Reason
	switch rec.Approval.State {
	case action.Pending, action.Approved, action.Executing:
		return toolBody{}, rec.ID, nil
	case action.Succeeded:
		return toolBody{Content: res.Text, IsError: res.IsError, Data: res.Data}, "", nil
	case action.Failed:
		text := res.Text
		if text == "" {
			text = "It failed: " + reason
		}
		return toolBody{Content: text, IsError: true}, "", nil
	case action.Rejected:
		text := "The owner declined this; it was not done."
		if reason != "" {
			text += " Their reason: " + reason
		}
		return toolBody{Content: text, IsError: true}, "", nil
	case action.Expired:
		return toolBody{Content: "No decision came before the approval expired; it was not done.", IsError: true}, "", nil
	case action.Refused:
		return toolBody{Content: "Refused before it ran, so nothing happened: " + reason, IsError: true}, "", nil
	case action.Unknown:
		return toolBody{Content: "Whether this took effect is unknown (" + reason + "); the owner will review it, and it is not run again.", IsError: true}, "", nil
	}
	return toolBody{Content: "The action ended in state " + string(rec.Approval.State) + ".", IsError: true}, "", nil
}

func (r *Runner) intended(ctx context.Context, runID, callID string) (bool, error) {
	var ok bool
	err := r.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.events WHERE payload->>'run_id' = $1
		AND kind = $3 AND payload->>'call_id' = $2)`, runID, callID, events.RunToolIntent).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("read the intents of run %s: %w", runID, err)
	}
	return ok, nil
}

func (r *Runner) directAttempt(ctx context.Context, runID, callID string) (state string, found bool, err error) {
	err = r.Pool.QueryRow(ctx, `SELECT state FROM core.effect_attempts WHERE run_id = $1 AND call_id = $2 ORDER BY id DESC LIMIT 1`,
		runID, callID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read the ledger of run %s: %w", runID, err)
	}
	return state, true, nil
}

// finish ends the run: input no step took becomes the next turn (its run enqueued).
func (r *Runner) finish(ctx context.Context, m Meta) error {
	wctx := context.WithoutCancel(ctx)
	next, err := r.Conversations.FinishThen(wctx, m.ConversationID, m.RunID, r.StartNext(m), func(ctx context.Context, tx pgx.Tx, next string) error {
		_, err := eventlog.Append(ctx, tx, events.RunFinished, m.ConversationID, events.RunFinishedPayload{RunID: m.RunID, NextRun: next})
		return err
	})
	if err != nil {
		return err
	}
	if r.Finished != nil {
		r.Finished(wctx, m, func() string { return r.lastText(wctx, m) })
	}
	metrics.RunFinished(metrics.RunAnswered)
	r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "run.finished"})
	if next != "" {
		r.publish(live.Event{ConversationID: m.ConversationID, RunID: next, Type: "owner.joined"})
	}
	return nil
}

// lastText is the run's last model text.
func (r *Runner) lastText(ctx context.Context, m Meta) string {
	entries, err := r.Conversations.Transcript(ctx, m.ConversationID)
	if err != nil {
		return ""
	}
	st, err := analyse(entries, m.RunID)
	if err != nil || st.last == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range st.last.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// StartNext enqueues the run that takes the input promoted after m.
func (r *Runner) StartNext(m Meta) conversation.StartRun {
	return func(ctx context.Context, tx pgx.Tx, conv conversation.Conversation, runID string) error {
		return Enqueue(ctx, tx, r.Insert, StartArgs{RunID: runID, ConversationID: conv.ID, Agent: conv.Agent, Surface: m.Surface, Interactive: m.Interactive})
	}
}

// StartNow is StartNext for a run Deliver will start at once: in the transaction that
// enqueues it, it also reads whether the owner paused all work, so that Deliver need not
// read it again.
func (r *Runner) StartNow(m Meta) conversation.StartRun {
	next := r.StartNext(m)
	return func(ctx context.Context, tx pgx.Tx, conv conversation.Conversation, runID string) error {
		if err := next(ctx, tx, conv, runID); err != nil {
			return err
		}
		if r.Paused != nil {
			if paused, err := r.Paused(ctx, tx); err != nil || paused {
				return err // paused: Deliver reads it again, and leaves the run to its job
			}
		}
		r.cleared.Store(runID, struct{}{})
		return nil
	}
}

// Close closes a failed turn as the seed says: the dangling calls are answered, a marker says
// the turn was not answered, the cause chain goes to the log, the owner gets one sentence,
// and a retry is offered only when honest (not for a permanent failure, not after a call).
// Input waiting for the run becomes the next turn.
func (r *Runner) Close(ctx context.Context, m Meta, cause error) error {
	wctx := context.WithoutCancel(ctx)
	class := Classify(cause)
	sentence := Sentence(cause)
	r.log().Error("a turn failed", "run", m.RunID, "conversation", m.ConversationID, "agent", m.Agent, "class", class.String(), "causes", chain(cause))
	var retry, stale bool
	err := pgx.BeginFunc(wctx, r.Pool, func(tx pgx.Tx) error {
		var active string
		if err := tx.QueryRow(wctx, `SELECT COALESCE(active_run::text, '') FROM core.conversations WHERE id = $1 FOR UPDATE`, m.ConversationID).Scan(&active); err != nil {
			return err
		}
		if active != m.RunID {
			stale = true // closed already, or the conversation moved on: say nothing there
			return nil
		}
		entries, err := conversation.Transcript(wctx, tx, m.ConversationID)
		if err != nil {
			return err
		}
		st, err := analyse(entries, m.RunID)
		if err != nil {
			return err
		}
		dispatched := false
		for _, c := range st.unanswered {
			body := toolBody{Content: "Not answered: the turn failed before this call was run.", IsError: true}
			if rec, found, err := action.ByCall(wctx, tx, m.RunID, c.ID); err != nil {
				return err
			} else if found {
				var wait string
				if body, wait, _ = answerFromAction(rec); wait != "" {
					body = toolBody{Content: "The turn failed while this waited for the owner's decision; the card stays with the owner, and its outcome is not reported here.", IsError: true}
				}
				dispatched = dispatched || rec.Approval.State != action.Pending
			} else if _, ran, err := r.directAttempt(wctx, m.RunID, c.ID); err != nil {
				return err
			} else if ran {
				dispatched = true
				body = toolBody{Content: "The turn failed after this call was dispatched: whether it took effect is unknown, and it is not run again.", IsError: true}
			}
			body.CallID, body.Tool = c.ID, c.Name
			if _, err := conversation.Append(wctx, tx, m.ConversationID, m.RunID, conversation.KindTool, body); err != nil {
				return err
			}
		}
		if _, err := conversation.Append(wctx, tx, m.ConversationID, m.RunID, conversation.KindMarker,
			textBody{Text: "the turn above failed and the owner's message was not answered"}); err != nil {
			return err
		}
		// A retry is honest only when nothing of this turn may have happened.
		retry = class != provider.Permanent && !st.calledTool && !dispatched
		return nil
	})
	if err != nil || stale {
		return err
	}
	// The conversation is free before anyone hears of the failure.
	if _, err := r.Conversations.Finish(wctx, m.ConversationID, m.RunID, r.StartNext(m)); err != nil {
		return err
	}
	if _, err := eventlog.Append(wctx, r.Pool, events.RunFailed, m.ConversationID, events.RunFailedPayload{
		RunID: m.RunID, Class: class.String(), Sentence: sentence, Retry: retry,
		Cause: r.scrub(text.FirstLine(cause.Error())),
	}); err != nil {
		return err
	}
	metrics.RunFinished(metrics.RunFailed)
	r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "run.failed", Text: sentence, Retry: retry})
	return nil
}

func liveResumed(m Meta, actionID string) live.Event {
	return live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "run.resumed", ActionID: actionID}
}
