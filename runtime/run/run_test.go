package run_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"buddi/core/action"
	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
	"buddi/internal/pgtest"
	"buddi/runtime/live"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
	"buddi/runtime/run"
)

// A full turn on each wire: the model calls a gated tool, the run suspends holding nothing,
// the owner approves, the effect happens once, and the resumed run answers with its result.
// Input the owner sends meanwhile joins the run as "The owner adds".
func TestFullTurnWithApproval(t *testing.T) {
	for _, w := range []provider.Wire{provider.WireAnthropic, provider.WireOpenAI} {
		t.Run(string(w), func(t *testing.T) {
			h := newHarness(t, w)
			h.model.Script(
				pt.Tools(pt.ToolCall{ID: "call_1", Name: wire("test.note"), Args: `{"text":"milk"}`}),
				pt.Text("Noted ", "milk."),
			)
			sent := h.send("note milk please")
			h.await(events.RunSuspended, sent.RunID)
			started := h.await(events.RunStarted, sent.RunID)
			var meta run.Meta
			if err := json.Unmarshal(started.Payload, &meta); err != nil {
				t.Fatal(err)
			}
			if meta.Account != "scripted" || meta.Model != "model-one" {
				t.Fatalf("run.started pinned %q/%q, want scripted/model-one", meta.Account, meta.Model)
			}
			if h.gated.runs.Load() != 0 {
				t.Fatal("the gated tool ran before the owner decided")
			}
			// The owner writes while the run waits: it joins the run.
			joined := h.send("and eggs")
			if !joined.Joined || joined.RunID != sent.RunID {
				t.Fatalf("the message did not join the waiting run: %+v", joined)
			}
			rec := h.pendingAction(sent.RunID)
			if _, err := executor.Decide(context.Background(), h.pool, run.JobQueue{Inserter: h.insert}, h.tools, testKey, action.Decision{ActionID: rec.ID, Approve: true, Surface: "terminal"}); err != nil {
				t.Fatal(err)
			}
			h.await(events.RunFinished, sent.RunID)
			if n := h.gated.runs.Load(); n != 1 {
				t.Fatalf("the effect ran %d times, want 1", n)
			}
			served := h.model.Served()
			if len(served) != 2 {
				t.Fatalf("%d model requests, want 2", len(served))
			}
			second := string(served[1].Body)
			if !strings.Contains(second, "noted (1)") || !strings.Contains(second, "The owner adds: and eggs") {
				t.Fatalf("the resumed step did not carry the result and the joined input:\n%s", second)
			}
			es := h.transcript(sent.Conversation.ID)
			last := es[len(es)-1]
			if last.Kind != conversation.KindAssistant || !strings.Contains(string(last.Body), "Noted milk.") {
				t.Fatalf("the transcript ends with %s %s", last.Kind, last.Body)
			}
			conv, err := h.convs.Get(context.Background(), sent.Conversation.ID)
			if err != nil {
				t.Fatal(err)
			}
			if conv.ActiveRun != "" {
				t.Fatalf("the conversation still has a run in flight: %s", conv.ActiveRun)
			}
		})
	}
}

// The lease is lost in the middle of a run, after an effect succeeded: the run is worked
// again by a new client and finishes, and the effect happened exactly once.
func TestRescueAfterEffectRunsItOnce(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(
		pt.Tools(pt.ToolCall{ID: "call_1", Name: wire("test.count"), Args: `{}`}),
		pt.Reply{Stall: true}, // the step after the effect hangs until the lease is lost
		pt.Text("Counted."),
	)
	sent := h.send("count once")
	pgtest.Eventually(t, "the effect and the stalled step", func() bool {
		return h.auto.runs.Load() == 1 && len(h.model.Requests()) == 2
	})
	h.stopQueue() // the lease is cancelled mid-step
	if len(h.events(events.RunFinished, sent.RunID)) != 0 {
		t.Fatal("the run finished although its step was cut off")
	}
	h.startQueue()
	h.await(events.RunFinished, sent.RunID)
	if n := h.auto.runs.Load(); n != 1 {
		t.Fatalf("the effect ran %d times, want exactly 1", n)
	}
	last := h.transcript(sent.Conversation.ID)
	if !strings.Contains(string(last[len(last)-1].Body), "Counted.") {
		t.Fatalf("the run did not finish its answer: %s", last[len(last)-1].Body)
	}
}

// A 429 with Retry-After: the call waits as told and goes through.
func TestRateLimitedThenServed(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Error(429, "retry-after", "1"), pt.Text("Here now."))
	sent := h.send("hello")
	step := h.await(events.RunStep, sent.RunID)
	var p struct{ Attempts int }
	if err := json.Unmarshal(step.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Attempts != 2 {
		t.Fatalf("the step took %d attempts, want 2 (the 429, then the retry)", p.Attempts)
	}
	h.await(events.RunFinished, sent.RunID)
	// Every surface was told that the provider asked buddi to wait, and until when.
	waiting := h.liveOf(sent.Conversation.ID, sent.RunID, "run.waiting")
	if len(waiting) != 1 || waiting[0].Until == nil || waiting[0].Text == "" {
		t.Fatalf("run.waiting events %+v, want one with a time and a sentence", waiting)
	}
	if d := waiting[0].Until.Sub(waiting[0].At); d < 500*time.Millisecond || d > 5*time.Second {
		t.Errorf("run.waiting says buddi tries again %s after it was published, want about the 1 s the provider asked", d)
	}
}

// A provider that drops the connection mid-stream: the attempt fails, what it streamed is not
// kept, and the next attempt answers the turn once.
func TestDroppedStreamIsRetried(t *testing.T) {
	h := newHarness(t, provider.WireOpenAI)
	h.model.Script(pt.Reply{Text: []string{"Half ", "an ", "answer"}, DropAfter: 1}, pt.Text("A whole answer."))
	sent := h.send("hello")
	h.await(events.RunFinished, sent.RunID)
	var assistant []string
	for _, e := range h.transcript(sent.Conversation.ID) {
		if e.Kind == conversation.KindAssistant {
			assistant = append(assistant, string(e.Body))
		}
	}
	if len(assistant) != 1 || !strings.Contains(assistant[0], "A whole answer.") {
		t.Fatalf("assistant entries %q, want only the whole answer", assistant)
	}
	// The surfaces were told the streamed text broke off and is void, before the next
	// attempt's text: a reader that keeps the text after the last run.retrying has the
	// answer once, not the pieces of every attempt glued together.
	var text string
	retried := false
	for _, ev := range h.liveOf(sent.Conversation.ID, sent.RunID, "") {
		switch ev.Type {
		case "text":
			text += ev.Text
		case "run.retrying":
			retried, text = true, ""
			if ev.Until == nil || ev.Text == "" {
				t.Errorf("run.retrying %+v: want when and why", ev)
			}
		}
	}
	if !retried || text != "A whole answer." {
		t.Fatalf("retried %v, text after it %q, want the whole answer alone", retried, text)
	}
}

// A turn that fails for want of setup (here a disabled account) or for good is told to the
// owner where they asked, and is not also a failed job.
func TestFailedInteractiveTurnIsNoFailedJob(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Error(401))
	refused := h.send("hello")
	h.await(events.RunFailed, refused.RunID)
	if err := h.accounts.SetEnabled(context.Background(), "scripted", false); err != nil {
		t.Fatal(err)
	}
	disabled := h.send("hello again")
	h.await(events.RunFailed, disabled.RunID)
	for _, id := range []string{refused.RunID, disabled.RunID} {
		pgtest.Eventually(t, "the run's job ends", func() bool {
			var state string
			_ = h.pool.QueryRow(context.Background(), `SELECT state FROM river.river_job WHERE kind = 'run.start' AND args->>'run_id' = $1`, id).Scan(&state)
			return state == "completed" || state == "cancelled" || state == "discarded"
		})
		var state string
		if err := h.pool.QueryRow(context.Background(), `SELECT state FROM river.river_job WHERE kind = 'run.start' AND args->>'run_id' = $1`, id).Scan(&state); err != nil || state != "completed" {
			t.Errorf("the job of failed run %s ended %q (%v), want completed: the owner was told, it is no failed job", id, state, err)
		}
	}
}

// A permanent failure closes the turn: dangling calls answered, a marker, one sentence, no
// retry offered, and the conversation free for the next message.
func TestPermanentFailureClosesTheTurn(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(
		pt.Tools(pt.ToolCall{ID: "call_1", Name: wire("test.count"), Args: `{}`}),
		pt.Error(401),
	)
	sent := h.send("count")
	failed := h.await(events.RunFailed, sent.RunID)
	var p struct {
		Class    string
		Sentence string
		Retry    bool
	}
	if err := json.Unmarshal(failed.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Class != "permanent" || p.Retry || !strings.Contains(p.Sentence, "refused this account's key") {
		t.Fatalf("run.failed %+v", p)
	}
	es := h.transcript(sent.Conversation.ID)
	if es[len(es)-1].Kind != conversation.KindMarker {
		t.Fatalf("the transcript ends with %s, want a marker", es[len(es)-1].Kind)
	}
	conv, _ := h.convs.Get(context.Background(), sent.Conversation.ID)
	if conv.ActiveRun != "" {
		t.Fatal("the failed run is still the conversation's run in flight")
	}
	// The next message starts a new run whose request replays cleanly past the marker.
	h.model.Script(pt.Text("Back."))
	next := h.send("again")
	h.await(events.RunFinished, next.RunID)
	if !strings.Contains(string(h.model.Served()[len(h.model.Served())-1].Body), "was not answered") {
		t.Fatal("the next request does not carry the marker")
	}
}

// A disabled account stops the next call, with a sentence that says how to fix it.
func TestDisabledAccountStopsTheNextCall(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	if err := h.accounts.SetEnabled(context.Background(), "scripted", false); err != nil {
		t.Fatal(err)
	}
	sent := h.send("hello")
	failed := h.await(events.RunFailed, sent.RunID)
	if !strings.Contains(string(failed.Payload), "buddi accounts enable scripted") {
		t.Fatalf("run.failed %s", failed.Payload)
	}
	if len(h.model.Requests()) != 0 {
		t.Fatal("a request reached the provider on a disabled account")
	}
}

// A secret planted in a tool result never reaches the provider, the transcript or the log.
func TestPlantedSecretNeverLeaves(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Tools(pt.ToolCall{ID: "call_1", Name: wire("test.peek"), Args: `{}`}), pt.Text("The port is 5432."))
	sent := h.send("what is in the config?")
	h.await(events.RunFinished, sent.RunID)
	second := string(h.model.Served()[1].Body)
	if strings.Contains(second, planted) {
		t.Fatal("the secret reached the provider")
	}
	if !strings.Contains(second, "‹secret:PLANTED›") && !strings.Contains(second, `\u2039secret:PLANTED\u203a`) {
		t.Fatalf("the provider request has no redaction mark:\n%s", second)
	}
	for _, e := range h.transcript(sent.Conversation.ID) {
		if strings.Contains(string(e.Body), planted) {
			t.Fatal("the secret is in the transcript")
		}
	}
	if strings.Contains(h.logs.String(), planted) {
		t.Fatal("the secret is in the log")
	}
}

// conversation.ask stops the rest of the batch, and the model then finishes without tools.
func TestAskStopsTheRestOfTheBatch(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(
		pt.Tools(
			pt.ToolCall{ID: "call_1", Name: wire("conversation.ask"), Args: `{"question":"Which list?"}`},
			pt.ToolCall{ID: "call_2", Name: wire("test.count"), Args: `{}`},
		),
		pt.Text("Which list should it go on?"),
	)
	sent := h.send("add it")
	h.await(events.RunFinished, sent.RunID)
	if h.auto.runs.Load() != 0 {
		t.Fatal("a call after the question ran")
	}
	second := h.model.Served()[1].JSON()
	if _, has := second["tools"]; has {
		t.Fatal("tools were offered after the question")
	}
	held, err := h.convs.HeldQuestions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if held["tester"] != 1 {
		t.Fatalf("held questions %v, want one for tester", held)
	}
	h.model.Script(pt.Text("Done."))
	answer := h.send("the shopping list")
	h.await(events.RunFinished, answer.RunID)
	if held, _ := h.convs.HeldQuestions(context.Background()); held["tester"] != 0 {
		t.Fatal("the answer did not release the question")
	}
}

// A rejected action resumes the run with the refusal as the call's answer.
func TestRejectionResumesTheRun(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Tools(pt.ToolCall{ID: "call_1", Name: wire("test.note"), Args: `{}`}), pt.Text("Understood."))
	sent := h.send("note it")
	h.await(events.RunSuspended, sent.RunID)
	rec := h.pendingAction(sent.RunID)
	if _, err := executor.Decide(context.Background(), h.pool, run.JobQueue{Inserter: h.insert}, h.tools, testKey, action.Decision{ActionID: rec.ID, Approve: false, Surface: "terminal", Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	h.await(events.RunFinished, sent.RunID)
	if h.gated.runs.Load() != 0 {
		t.Fatal("a rejected action ran")
	}
	if !strings.Contains(string(h.model.Served()[1].Body), "The owner declined this") {
		t.Fatal("the model was not told the owner declined")
	}
}

// A resumption that arrives after its run is over (a duplicate, or a run whose turn was
// closed) says nothing: only the conversation's run in flight may speak.
func TestLateResumptionSaysNothing(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Text("Hi."))
	sent := h.send("hello")
	h.await(events.RunFinished, sent.RunID)
	before := len(h.transcript(sent.Conversation.ID))
	ctx := context.Background()
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.insert.InsertTx(ctx, tx, run.ResumeArgs{RunID: sent.RunID, ActionID: "00000000-0000-4000-8000-000000000001"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pgtest.Eventually(t, "the late resumption to complete", func() bool {
		var n int
		_ = h.pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'run.resume' AND state = 'completed'`).Scan(&n)
		return n == 1
	})
	if after := len(h.transcript(sent.Conversation.ID)); after != before {
		t.Fatalf("the transcript grew from %d to %d entries", before, after)
	}
	if n := len(h.model.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}

// The owner stops a turn in the middle of a model step: the turn is closed at once, saying
// so, and the conversation is free.
func TestStopClosesTheTurn(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Reply{Stall: true})
	sent := h.send("think for a long time")
	pgtest.Eventually(t, "the step to start", func() bool { return len(h.model.Requests()) == 1 })
	if h.host.Stop(sent.Conversation.ID, "another-run", run.ErrStopped) {
		t.Fatal("stopped a run that is not the one running")
	}
	if !h.host.Stop(sent.Conversation.ID, sent.RunID, run.ErrStopped) {
		t.Fatal("nothing to stop")
	}
	failed := h.await(events.RunFailed, sent.RunID)
	if !strings.Contains(string(failed.Payload), "You stopped this turn.") {
		t.Fatalf("run.failed %s", failed.Payload)
	}
	conv, _ := h.convs.Get(context.Background(), sent.Conversation.ID)
	if conv.ActiveRun != "" {
		t.Fatal("the stopped run is still in flight")
	}
	if h.host.Stop(sent.Conversation.ID, sent.RunID, run.ErrStopped) {
		t.Fatal("stopped a turn that was not running")
	}
}

// The grant is the only thing that gives an agent a tool: a call of a registered tool outside
// it is refused and never runs, and it was never offered.
func TestUngrantedToolIsRefused(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Tools(pt.ToolCall{ID: "call_1", Name: wire("test.hidden"), Args: `{}`}), pt.Text("Sorry."))
	sent := h.send("do the hidden thing")
	h.await(events.RunFinished, sent.RunID)
	if h.hidden.runs.Load() != 0 {
		t.Fatal("a tool outside the grant ran")
	}
	first, second := string(h.model.Served()[0].Body), string(h.model.Served()[1].Body)
	if strings.Contains(first, wire("test.hidden")) {
		t.Fatal("a tool outside the grant was offered")
	}
	if !strings.Contains(second, "is not one of your tools") {
		t.Fatal("the model was not told the tool is not its own")
	}
}

// A panic in a run's own code is its run actor's crash: the conversation's actor restarts it
// and the turn answers; a run that keeps crashing fails with one sentence to the owner, and
// the conversation answers the next message.
func TestRunCrashIsRestartedThenGivenUp(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.panics.Store(1)
	h.model.Script(pt.Text("Fine after all."))
	sent := h.send("hello")
	h.await(events.RunFinished, sent.RunID)
	if h.panics.Load() >= 0 {
		t.Fatal("the run's code never panicked")
	}
	var attempt int
	if err := h.pool.QueryRow(context.Background(), `SELECT attempt FROM river.river_job WHERE kind = 'run.start' AND args->>'run_id' = $1`, sent.RunID).Scan(&attempt); err != nil {
		t.Fatal(err)
	}
	if attempt != 1 {
		t.Fatalf("the run's job took %d attempts: the crash went to the queue, not to the run's supervisor", attempt)
	}

	h.panics.Store(100)
	crashed := h.send("again")
	failed := h.await(events.RunFailed, crashed.RunID)
	var p struct {
		Class    string
		Sentence string
	}
	if err := json.Unmarshal(failed.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Class != "permanent" || !strings.Contains(p.Sentence, "crashed 3 times in buddi's own code") || strings.Contains(p.Sentence, "goroutine") {
		t.Fatalf("run.failed %+v", p)
	}
	h.panics.Store(0)
	h.model.Script(pt.Text("Back."))
	next := h.send("and now?")
	h.await(events.RunFinished, next.RunID)
}

// A delivered run starts before the queue fetches its job: with the queue stopped the turn is
// answered; the job, when the queue runs again, takes the result and runs nothing twice. While
// the owner has paused all work, nothing is delivered.
func TestDeliveredRunNeedsNoFetch(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.stopQueue()
	h.model.Script(pt.Text("At once."))
	sent := h.send("quick")
	args := run.StartArgs{RunID: sent.RunID, ConversationID: sent.Conversation.ID, Agent: "tester", Surface: "terminal", Interactive: true}

	paused := true
	h.runner.Paused = func(context.Context, eventlog.Querier) (bool, error) { return paused, nil }
	h.runner.Deliver(context.Background(), args)
	if n := len(h.events(events.RunStarted, sent.RunID)); n != 0 {
		t.Fatalf("a run was delivered while work was paused (%d run.started)", n)
	}

	paused = false
	h.runner.Deliver(context.Background(), args)
	h.await(events.RunFinished, sent.RunID)
	h.startQueue()
	pgtest.Eventually(t, "the run's job done", func() bool {
		var state string
		err := h.pool.QueryRow(context.Background(), `SELECT state FROM river.river_job WHERE kind = 'run.start' AND args->>'run_id' = $1`, sent.RunID).Scan(&state)
		return err == nil && state == "completed"
	})
	if n := len(h.model.Served()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
	if n := len(h.events(events.RunStarted, sent.RunID)); n != 1 {
		t.Fatalf("%d run.started events, want 1", n)
	}
	if n := len(h.events(events.RunFinished, sent.RunID)); n != 1 {
		t.Fatalf("%d run.finished events, want 1", n)
	}
}

// A message whose run StartNow enqueued learns in that transaction whether work is paused:
// Deliver then reads nothing more; enqueued while paused, the run is not delivered.
func TestStartNowReadsThePauseWithTheMessage(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.stopQueue()
	var paused atomic.Bool
	var reads atomic.Int32
	h.runner.Paused = func(context.Context, eventlog.Querier) (bool, error) {
		reads.Add(1)
		return paused.Load(), nil
	}
	send := func(text string) (conversation.Sent, run.StartArgs) {
		t.Helper()
		sent, err := h.convs.Send(context.Background(), conversation.Message{Agent: "tester", Surface: "terminal", Text: text},
			h.runner.StartNow(run.Meta{Surface: "terminal", Interactive: true}))
		if err != nil {
			t.Fatal(err)
		}
		return sent, run.StartArgs{RunID: sent.RunID, ConversationID: sent.Conversation.ID, Agent: "tester", Surface: "terminal", Interactive: true}
	}

	paused.Store(true)
	held, args := send("while paused")
	h.runner.Deliver(context.Background(), args)
	if n := len(h.events(events.RunStarted, held.RunID)); n != 0 {
		t.Fatalf("a run enqueued while work was paused was delivered (%d run.started)", n)
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("the pause was read %d times, want 2 (in the message's transaction, then by Deliver)", n)
	}
	paused.Store(false)
	h.model.Script(pt.Text("Held."), pt.Text("At once."))
	h.startQueue() // the held run's job takes it
	h.await(events.RunFinished, held.RunID)

	reads.Store(0)
	sent, args := send("quick")
	h.runner.Deliver(context.Background(), args)
	h.await(events.RunFinished, sent.RunID)
	if n := reads.Load(); n != 1 {
		t.Fatalf("the pause was read %d times for a delivered message, want 1 (in its own transaction)", n)
	}
}

// liveOf returns the live events of run so far (of type kind, or all when kind is ""), once
// the run has ended on the hub.
func (h *harness) liveOf(conv, run, kind string) []live.Event {
	h.t.Helper()
	var out []live.Event
	pgtest.Eventually(h.t, "the run's end on the live hub", func() bool {
		sub := h.hub.Subscribe(conv, run)
		defer sub.Close()
		out = out[:0]
		ended := false
		for {
			select {
			case ev := <-sub.C:
				if ev.RunID != run {
					continue
				}
				ended = ended || ev.Type == "run.finished" || ev.Type == "run.failed"
				if kind == "" || ev.Type == kind {
					out = append(out, ev)
				}
				continue
			default:
			}
			return ended
		}
	})
	return out
}

// A colleague's run asked on the way down from a buddi mcp request is judged as that request:
// its calls carry the depth and the first request's surface (remote), and run.started keeps
// the origin, so a run resumed after an approval is judged the same.
func TestDelegatedCallsAreJudgedAsTheirOrigin(t *testing.T) {
	h := newHarness(t, provider.WireAnthropic)
	h.model.Script(pt.Tools(pt.ToolCall{ID: "toolu_1", Name: provider.WireToolName("test.count"), Args: `{"text":"x"}`}), pt.Text("Counted."))
	deleg := run.Delegation{By: "boss", Depth: 1, Chain: []string{"boss"}, Origin: conversation.SurfaceMCP}
	sent, err := h.convs.StartDetached(context.Background(), "tester", "Count once, please.", h.runner.StartDelegated(deleg), nil)
	if err != nil {
		t.Fatal(err)
	}
	h.await(events.RunFinished, sent.RunID)
	call := h.auto.last.Load()
	if call == nil || call.DelegationDepth != 1 || call.Surface != conversation.SurfaceMCP || !call.Remote {
		t.Fatalf("the delegated call: %+v; want depth 1, surface mcp, remote", call)
	}
	m, found, err := run.ReadMeta(context.Background(), h.pool, sent.RunID)
	if err != nil || !found || m.Origin != conversation.SurfaceMCP || m.Depth != 1 {
		t.Fatalf("run.started: %+v (found %v, %v)", m, found, err)
	}
}
