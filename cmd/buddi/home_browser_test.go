package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// Home in a real browser, everything that needs the owner answered from it while it stays
// open: a card's declared choice is picked, and the pick survives the redraws a mission's
// report brings (the report arrives under What arrived without a reload); the card is approved
// with it. An agent's held question is listed with its text, the chat opens on its
// conversation, a half-typed answer survives a redraw, and the answer sent from Home is the
// conversation's next message, which the agent answers. Of two failed jobs one is retried and
// runs, the other cancelled after its confirming sentence. Home is kept at 1280 and 390 px.
func TestHomeInBrowser(t *testing.T) {
	model, s, vars := scriptedServe(t)
	conn := dbConn(t, s.home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if code, out, errOut := runBuddi(t, vars, time.Minute, "developer", "workspace", "set", t.TempDir()); code != 0 {
		t.Fatalf("workspace set: %d %s%s", code, out, errOut)
	}
	// Two failed jobs, as the queue leaves one that used up its attempts: probes, a kind
	// buddi runs, so a retry can be seen to run.
	var retried, cancelled int64
	for _, id := range []*int64{&retried, &cancelled} {
		if err := conn.QueryRow(ctx, `INSERT INTO river.river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, finalized_at, errors)
			VALUES ('{"note":"home"}', 'queue.probe', 3, 'default', 'discarded', 3, now(), now(),
			        ARRAY['{"at":"2026-11-29T00:00:00Z","attempt":3,"error":"connection reset by peer"}'::jsonb]) RETURNING id`).Scan(id); err != nil {
			t.Fatal(err)
		}
	}
	jobState := func(id int64) string {
		var state string
		if err := conn.QueryRow(ctx, `SELECT state::text FROM river.river_job WHERE id = $1`, id).Scan(&state); err != nil {
			t.Fatal(err)
		}
		return state
	}

	p := openPage(t, s)
	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p.width(1280)
	p.navigate(link.URL)
	p.poll("Home with the failed jobs", fmt.Sprintf(`document.querySelector('main').innerText.includes('Needs you') && !!document.querySelector('main [data-job="%d"] button.retry') && !!document.querySelector('main [data-job="%d"] button.cancel')`, retried, cancelled))

	// A card with a declared choice waits on Home; the owner picks the option that is not the
	// default.
	model.Script(pt.Tools(pt.ToolCall{ID: "toolu_env", Name: provider.WireToolName("developer.run"), Args: `{"command":"env"}`}))
	conv := s.send(t, `{"agent":"@dev","text":"run env in my project","surface":"dashboard"}`)
	p.poll("the card's choice on Home", `!!document.querySelector('main .approval [data-choice] input[value="exactly this command"]')`)
	p.click(`main .approval [data-choice] input[value="exactly this command"]`)
	p.eval(`document.querySelector('main .approval').drawnBefore = true; ''`)

	// A mission reports while Home is open: its run's events redraw Home, and the report is
	// drawn under What arrived without a reload.
	if code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "@dev", "--cron", "0 9 * * 1", "--prompt", "Check the nightly build."); code != 0 {
		t.Fatalf("missions add: %d %s%s", code, out, errOut)
	}
	model.Script(pt.Tools(pt.ToolCall{ID: "toolu_report", Name: provider.WireToolName("mission.report"), Args: `{"report":"The nightly build is green."}`}),
		pt.Text("Reported."))
	if code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "run-now", "1"); code != 0 {
		t.Fatalf("missions run-now: %d %s%s", code, out, errOut)
	}
	p.poll("the report under What arrived", `[...document.querySelectorAll('main .notice')].some(n => n.innerText.includes('The nightly build is green.'))`)
	waitFor(t, "the mission's run to finish", time.Minute, func() bool {
		var n int
		return conn.QueryRow(ctx, `SELECT count(*) FROM core.occurrences o JOIN core.events e ON e.kind = 'run.finished' AND e.payload->>'run_id' = o.run_id
			WHERE o.mission_id = 1`).Scan(&n) == nil && n == 1
	})
	// The card was drawn again, and the owner's pick with it.
	if got := p.eval(`(() => { const c = document.querySelector('main .approval'); return c.drawnBefore ? 'the same node' : c.querySelector('[data-choice] input:checked').value })()`); got != "exactly this command" {
		t.Fatalf("after Home redrew, the card's pick is %q, want the owner's \"exactly this command\"", got)
	}
	// The replies are one queue: the approved turn's comes after the mission's.
	model.Script(pt.Text("Ran it."))
	p.click(`main .approval button.primary`)
	p.poll("Home without the card", `document.querySelector('main').innerText.includes('No approvals are waiting.')`)
	var decided []struct {
		Tool     string
		Approval struct{ Picks map[string]string }
	}
	s.getJSON(t, "/api/approvals?state=all", &decided)
	if len(decided) != 1 || decided[0].Tool != "developer.run" || decided[0].Approval.Picks["remember in this workspace"] != "exactly this command" {
		t.Fatalf("approvals = %+v: want developer.run decided with the owner's pick", decided)
	}
	waitFor(t, "the approved turn to finish", time.Minute, func() bool {
		c := conversationOf(t, s, conv)
		return c.Conversation.ActiveRun == "" && strings.Contains(c.text(), "Ran it.")
	})

	// The agent asks a question: Home lists it with the agent and its words.
	model.Script(pt.Tools(pt.ToolCall{ID: "toolu_ask", Name: provider.WireToolName("conversation.ask"), Args: `{"question":"Which branch should I build?"}`}),
		pt.Text("Which branch should I build?"))
	if got := s.send(t, `{"agent":"@dev","text":"build it","surface":"dashboard"}`); got != conv {
		t.Fatalf("the second message went to conversation %q, want %q", got, conv)
	}
	p.poll("the question on Home", `!!document.querySelector('main [data-question]') && document.querySelector('main [data-question]').innerText.includes('Which branch should I build?')`)
	if got := p.eval(`document.querySelector('main [data-question]').dataset.question`); got != conv {
		t.Fatalf("the question is in conversation %q, want %q", got, conv)
	}
	if got := p.eval(`document.querySelector('main [data-question] strong').innerText`); got != "@dev" {
		t.Errorf("the question's agent reads %q, want @dev", got)
	}
	// Half an answer, then a redraw (the retry below redraws Home): the answer stays.
	p.set(`main [data-question] textarea`, "the release")
	p.eval(`document.querySelector('main [data-question]').drawnBefore = true; ''`)

	// The first failed job is retried from Home: it leaves the list and runs.
	p.click(fmt.Sprintf(`main [data-job="%d"] button.retry`, retried))
	p.poll("Home without the retried job", fmt.Sprintf(`!document.querySelector('main [data-job="%d"]') && !document.querySelector('main [data-question]').drawnBefore`, retried))
	waitFor(t, "the retried job to run", time.Minute, func() bool { return jobState(retried) == "completed" })
	if got := p.eval(`document.querySelector('main [data-question] textarea').value`); got != "the release" {
		t.Fatalf("after Home redrew, the half-typed answer is %q, want \"the release\"", got)
	}

	// The chat opens on the question's conversation; back on Home the answer is still there.
	p.click(`main [data-question] a.open-chat`)
	p.poll("the question's conversation", `location.hash === '#/chat/developer' && (document.querySelector('#thread')||{innerText:''}).innerText.includes('Which branch should I build?')`)
	p.goTo("#/home")
	p.poll("Home with the answer kept", `(document.querySelector('main [data-question] textarea')||{}).value === 'the release'`)

	// The second failed job: Cancel asks in a sentence first.
	p.click(fmt.Sprintf(`main [data-job="%d"] button.cancel`, cancelled))
	p.poll("the confirming sentence", fmt.Sprintf(`(document.querySelector('main [data-job="%d"] .confirm')||{innerText:''}).innerText.includes('Cancel job #%d')`, cancelled, cancelled))
	if st := jobState(cancelled); st != "discarded" {
		t.Fatalf("before its confirmation the job is %s", st)
	}
	p.shootBoth("home")
	p.click(fmt.Sprintf(`main [data-job="%d"] button.confirm-cancel`, cancelled))
	p.poll("Home without failed jobs", `document.querySelector('main').innerText.includes('No failed jobs.')`)
	var by string
	if err := conn.QueryRow(ctx, `SELECT dismissed_by FROM core.job_dismissals WHERE job_id = $1`, cancelled).Scan(&by); err != nil || jobState(cancelled) != "cancelled" {
		t.Fatalf("the cancelled job: state %s, dismissal %q (%v)", jobState(cancelled), by, err)
	}

	// The answer, sent from Home, is the conversation's next message; the agent answers it.
	model.Script(pt.Text("Building the release branch."))
	p.set(`main [data-question] textarea`, "the release branch")
	p.click(`main [data-question] button[type=submit]`)
	p.poll("Home without the question", `!document.querySelector('main [data-question]') && document.querySelector('main').innerText.includes('No agent is waiting for an answer.')`)
	waitFor(t, "the agent's answer", time.Minute, func() bool {
		return strings.Contains(conversationOf(t, s, conv).text(), "Building the release branch.")
	})
	if got := conversationOf(t, s, conv).text(); !strings.Contains(got, "the release branch") {
		t.Fatalf("the conversation does not hold the owner's answer:\n%s", got)
	}
	p.shootBoth("home-answered")
}

// send posts a message (body) to the served dashboard with the command line's token, and
// returns the conversation it went to.
func (s *served) send(t *testing.T, body string) string {
	t.Helper()
	resp, err := s.request("POST", "/api/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var sent struct{ Conversation struct{ ID string } }
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &sent) != nil || sent.Conversation.ID == "" {
		t.Fatalf("POST /api/messages %s: %s %s", body, resp.Status, raw)
	}
	return sent.Conversation.ID
}

// servedConversation is GET /api/conversations/{id}.
type servedConversation struct {
	Conversation struct {
		ActiveRun string `json:"active_run"`
	}
	Transcript []struct {
		Kind string
		Body json.RawMessage
	}
}

// text is the transcript's bodies, one a line.
func (c servedConversation) text() string {
	var b strings.Builder
	for _, e := range c.Transcript {
		b.WriteString(e.Kind + " " + string(e.Body) + "\n")
	}
	return b.String()
}

// conversationOf reads a conversation and its transcript.
func conversationOf(t *testing.T, s *served, id string) servedConversation {
	t.Helper()
	var c servedConversation
	s.getJSON(t, "/api/conversations/"+id, &c)
	return c
}
