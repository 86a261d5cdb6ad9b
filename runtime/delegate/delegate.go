// Package delegate is agent.delegate (seed 004, "Delegation"): an agent asks a colleague a
// question in a fresh conversation of the colleague's own, and the colleague's answer comes
// back as the tool's result.
//
// Who an agent may ask is its delegates.json, read at every call (agents.ReadDelegates): a
// call to anyone else is refused with the list. The colleague's run is marked delegated
// (run.Meta's DelegatedBy, Depth and Chain, pinned in its run.started event), so its calls
// carry their depth and neither a standing permission nor the session tier reaches them;
// delegations go at most MaxDepth deep and never back up their own chain. The asking call
// waits for the colleague's run to end, an approval it stops at included, up to the tool's
// wait; files the colleague made stay credited to it and are listed in the answer.
//
// The family is runtime-owned like conversation.ask: Manifest gives its declaration (so a
// grant naming agent.delegate loads everywhere), and Bind hands it the running runtime in
// buddi serve; elsewhere a call says delegation is not available.
package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/agents"
	"buddi/core/events"
	"buddi/plugins"
	"buddi/runtime/run"
)

// Tool is the tool's name.
const Tool = "agent.delegate"

// MaxDepth is how deep delegations go: the owner's agent asks (depth 1), its colleague asks
// (2), that one's asks (3), and no further.
const MaxDepth = 3

// Timeout bounds one call: the registry's deadline, above the longest wait.
const Timeout = 30 * time.Minute

// DefaultWait is how long a call waits for the colleague's answer before it says the
// colleague is still at it (or still waiting for the owner's approval).
const DefaultWait = 28 * time.Minute

// Deps is what a call needs of the running buddi.
type Deps struct {
	// Runner starts the colleague's run and reads its answer; its Pool, Conversations and
	// Catalog are the ones used.
	Runner *run.Runner
	// Agents says where delegates.json files are (the owner's agents directory, the examples).
	Agents agents.Config
	// Log hears ignored delegates.json entries; nil discards.
	Log *slog.Logger
	// Wait is how long a call waits for the answer; zero is DefaultWait.
	Wait time.Duration
	// Poll is how often the colleague's run is looked at; zero is 250ms.
	Poll time.Duration
}

// Manifest is the agent family: agent.delegate, not bound to a running buddi yet.
func Manifest() plugins.Manifest {
	return plugins.Manifest{
		Name: "agent", Version: "1", Description: "Asking a colleague agent, in a conversation of its own.",
		Tools: []plugins.Tool{&tool{}},
	}
}

// Bind hands deps to the agent.delegate of manifests; it reports whether it found one.
func Bind(manifests []plugins.Manifest, deps Deps) bool {
	for _, m := range manifests {
		for _, t := range m.Tools {
			if dt, ok := t.(*tool); ok {
				dt.deps.Store(&deps)
				return true
			}
		}
	}
	return false
}

type tool struct{ deps atomic.Pointer[Deps] }

type args struct {
	Agent    string `json:"agent"`
	Question string `json:"question"`
}

func (*tool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Tool,
		Description: "Ask a colleague agent (by handle, like @dev, or id) a question or hand it a task. It works in a conversation " +
			"of its own with its own tools, and its final answer comes back as this tool's result (which may take minutes, or wait " +
			"for the owner's approval of what it does). Write the question so it stands alone: the colleague sees nothing else of " +
			"this conversation. Only the colleagues you may ask are accepted.",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["agent","question"],"properties":{
			"agent":{"type":"string","minLength":1,"maxLength":65,"description":"The colleague's handle (@dev) or id."},
			"question":{"type":"string","minLength":1,"maxLength":8000,"description":"The question or task, complete in itself."}}}`),
		Effects: []plugins.Effect{plugins.EffectStateWrite}, // a conversation and a run of the colleague's
		Tier:    plugins.TierAuto,
		Timeout: Timeout,
	}
}

func (*tool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Envelope{}, err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(a.Question), "\n")
	return plugins.Envelope{Summary: "Ask " + agents.NormalizeHandle(a.Agent) + ": " + first, Effects: []plugins.Effect{plugins.EffectStateWrite},
		Targets: []string{a.Agent}}, nil
}

// refused is a result the asking model reads: nothing was started.
func refused(sentence string) (plugins.Result, error) {
	return plugins.Result{Text: "Refused: " + sentence, IsError: true}, nil
}

func (t *tool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	d := t.deps.Load()
	if d == nil || d.Runner == nil {
		return refused("delegation is not available in this buddi process (only buddi serve runs colleagues).")
	}
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, fmt.Errorf("read the arguments: %w", err)
	}
	r := d.Runner
	cat, err := r.Catalog()
	if err != nil {
		return plugins.Result{}, fmt.Errorf("load the agents: %w", err)
	}
	asker, ok := cat.ByID(call.Agent)
	if !ok {
		return refused(fmt.Sprintf("the asking agent %s is not installed.", call.Agent))
	}

	// Who asked on the way down to this run, from what it pinned.
	var chain []string
	askedIn := call.ConversationID
	if call.RunID != "" {
		m, found, err := run.ReadMeta(ctx, r.Pool, call.RunID)
		if err != nil {
			return plugins.Result{}, err
		}
		if found {
			chain = m.Chain
		}
	}
	depth := max(call.DelegationDepth, len(chain))
	path := strings.Join(append(handles(cat, chain), asker.Handle), " → ")
	if depth+1 > MaxDepth {
		return refused(fmt.Sprintf("this is already a delegation %d deep (%s), and buddi hands work on at most %d deep; answer with what you have, or say who the owner should ask.",
			depth, path, MaxDepth))
	}

	list, err := agents.ReadDelegates(d.Agents, cat, asker, d.Log)
	if err != nil {
		return refused(err.Error())
	}
	colleague, err := list.Resolve(cat, a.Agent)
	var no *agents.RefusedError
	if errors.As(err, &no) {
		return refused(no.Sentence)
	}
	if err != nil {
		return plugins.Result{}, err
	}
	for _, id := range chain {
		if id == colleague.ID {
			return refused(fmt.Sprintf("%s already asked for this further up (%s); answer with what you have rather than handing it back.", colleague.Handle, path))
		}
	}

	deleg := run.Delegation{By: asker.ID, Depth: depth + 1, Chain: append(append([]string{}, chain...), asker.ID), AskedIn: askedIn, AskedRun: call.RunID, Origin: call.Surface}
	text := fmt.Sprintf("%s (%s) asks you this, in a conversation of your own: your last message is the answer it gets, so end with the whole answer. "+
		"The owner is not in this conversation, but sees any approval you wait for.\n\n%s", asker.Handle, asker.Name, strings.TrimSpace(a.Question))
	sent, err := r.Conversations.StartDetached(ctx, colleague.ID, text, r.StartDelegated(deleg), nil)
	if err != nil {
		return plugins.Result{}, fmt.Errorf("start %s's conversation: %w", colleague.Handle, err)
	}
	r.Deliver(ctx, run.StartArgs{RunID: sent.RunID, ConversationID: sent.Conversation.ID, Agent: colleague.ID, Interactive: true, Delegation: &deleg})
	return t.await(ctx, d, colleague, sent.Conversation.ID, sent.RunID)
}

// handles are the handles of ids, for a sentence (an id no longer installed stays an id).
func handles(cat *agents.Catalog, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if a, ok := cat.ByID(id); ok {
			out[i] = a.Handle
		}
	}
	return out
}

// await waits for the colleague's run to end, and answers with what it said.
func (t *tool) await(ctx context.Context, d *Deps, colleague agents.Agent, conv, runID string) (plugins.Result, error) {
	wait, poll := d.Wait, d.Poll
	if wait <= 0 {
		wait = DefaultWait
	}
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)-time.Minute < wait {
		wait = max(time.Until(dl)-time.Minute, time.Second)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		kind, payload, err := lastOutcome(ctx, d.Runner, runID)
		if err != nil {
			return plugins.Result{}, err
		}
		switch kind {
		case events.RunFinished:
			return answered(ctx, d.Runner, colleague, conv, runID)
		case events.RunFailed:
			var p events.RunFailedPayload
			_ = json.Unmarshal(payload, &p)
			return plugins.Result{IsError: true, Text: fmt.Sprintf("%s could not answer: %s (its conversation is %s.)", colleague.Handle, p.Sentence, conv),
				Data: data(colleague, conv, runID, nil)}, nil
		}
		select {
		case <-ctx.Done():
			return plugins.Result{}, fmt.Errorf("waiting for %s's answer: %w", colleague.Handle, context.Cause(ctx))
		case <-deadline.C:
			waiting, err := pending(ctx, d.Runner, runID)
			if err != nil {
				return plugins.Result{}, err
			}
			if waiting {
				return plugins.Result{Text: fmt.Sprintf("%s is still waiting for the owner's approval; the colleague's conversation is %s. "+
					"Tell the owner so; its answer is in that conversation once they decide.", colleague.Handle, conv), Data: data(colleague, conv, runID, nil)}, nil
			}
			return plugins.Result{Text: fmt.Sprintf("%s is still working on it after %s; the colleague's conversation is %s, where its answer will be.",
				colleague.Handle, wait.Round(time.Second), conv), Data: data(colleague, conv, runID, nil)}, nil
		case <-tick.C:
		}
	}
}

// lastOutcome is run.finished or run.failed of the run, when it has ended ("" otherwise).
func lastOutcome(ctx context.Context, r *run.Runner, runID string) (events.Kind, []byte, error) {
	var kind string
	var payload []byte
	err := r.Pool.QueryRow(ctx, `SELECT kind, payload FROM core.events WHERE payload->>'run_id' = $1 AND kind = ANY($2)
		ORDER BY id DESC LIMIT 1`, runID, []string{string(events.RunFinished), string(events.RunFailed)}).Scan(&kind, &payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("read how run %s ended: %w", runID, err)
	}
	return events.Kind(kind), payload, nil
}

// pending reports whether the colleague's run waits on an approval (the runner told the
// owner of it: nobody watches the colleague's conversation).
func pending(ctx context.Context, r *run.Runner, runID string) (bool, error) {
	var waiting bool
	err := r.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.actions a JOIN core.approvals p ON p.action_id = a.id
		WHERE a.run_id = $1 AND p.state = 'pending')`, runID).Scan(&waiting)
	if err != nil {
		return false, fmt.Errorf("read the approvals of run %s: %w", runID, err)
	}
	return waiting, nil
}

// artifact is a file the colleague made in its conversation.
type artifact struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	MediaType string `json:"media_type"`
	Agent     string `json:"agent"`
}

// answered is the finished colleague's answer, with the files it made.
func answered(ctx context.Context, r *run.Runner, colleague agents.Agent, conv, runID string) (plugins.Result, error) {
	m, _, err := run.ReadMeta(ctx, r.Pool, runID)
	if err != nil {
		return plugins.Result{}, err
	}
	text := strings.TrimSpace(r.LastText(ctx, m))
	if text == "" {
		text = "(it finished without a word)"
	}
	rows, err := r.Pool.Query(ctx, `SELECT id::text, name, media_type, agent FROM core.artifacts WHERE conversation_id = $1 ORDER BY created_at, id`, conv)
	if err != nil {
		return plugins.Result{}, fmt.Errorf("read the files of %s's conversation: %w", colleague.Handle, err)
	}
	files, err := pgx.CollectRows(rows, pgx.RowToStructByPos[artifact])
	if err != nil {
		return plugins.Result{}, fmt.Errorf("read the files of %s's conversation: %w", colleague.Handle, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered (its conversation is %s):\n\n%s", colleague.Handle, conv, text)
	if len(files) > 0 {
		fmt.Fprintf(&b, "\n\nFiles %s made, credited to it and attached to this answer:", colleague.Handle)
		for _, f := range files {
			fmt.Fprintf(&b, "\n- %s (%s, artifact %s)", f.Name, f.MediaType, f.ID)
		}
	}
	return plugins.Result{Text: b.String(), Data: data(colleague, conv, runID, files)}, nil
}

// data is the structured answer: who answered, where, and the files it made.
func data(colleague agents.Agent, conv, runID string, files []artifact) json.RawMessage {
	if files == nil {
		files = []artifact{}
	}
	raw, _ := json.Marshal(map[string]any{"renderer": "delegation", "agent": colleague.ID, "handle": colleague.Handle,
		"conversation_id": conv, "run_id": runID, "artifacts": files})
	return raw
}
