package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// A card's declared choice decided from Home in a real browser: the agent runs a command that
// asks (env is not on the run list), the owner picks "exactly this command" for "remember in
// this workspace" (not the default) on Home and approves; the command is then remembered, and
// the same command asked for again runs without a card.
func TestCardChoiceFromHomeInBrowser(t *testing.T) {
	model, s, vars := scriptedServe(t)
	dir := t.TempDir()
	run := func(id string) pt.Reply {
		return pt.Reply{Text: []string{"Running it."}, InputTokens: 10, OutputTokens: 5,
			ToolCalls: []pt.ToolCall{{ID: id, Name: provider.WireToolName("developer.run"), Args: `{"command":"env"}`}}}
	}
	model.Script(
		pt.Reply{Text: []string{"A workspace first."}, InputTokens: 10, OutputTokens: 5,
			ToolCalls: []pt.ToolCall{{ID: "toolu_ws", Name: provider.WireToolName("developer.workspace"), Args: `{"directory":"` + dir + `"}`}}},
		run("toolu_run1"),
		pt.Text("Ran it once."),
		run("toolu_run2"),
		pt.Text("Ran it again."),
	)
	p := openPage(t, s)
	base := fmt.Sprintf("http://127.0.0.1:%d", s.port)
	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p.width(1280)
	p.navigate(link.URL)
	p.navigate(base + "/#/chat/developer")
	p.typeInto(`form.compose textarea`, "run env in my project")
	p.click(`form.compose button[type=submit]`)
	// The workspace's card carries no choice; it is approved in the chat.
	p.poll("the workspace card", `!!document.querySelector('#thread .approval button.primary')`)
	if n := p.eval(`String(document.querySelectorAll('#thread .approval .choice').length)`); n != "0" {
		t.Errorf("the workspace card shows %s choices, want none", n)
	}
	p.click(`#thread .approval button.primary`)

	// The command's card waits on Home with its choice, the default picked.
	p.goTo("#/home")
	p.poll("Home shows the command's card with its choice", `!!document.querySelector('main .approval [data-choice="remember in this workspace"] input:checked') && document.querySelector('main .approval').innerText.includes('env')`)
	if got := p.eval(`document.querySelector('main .approval [data-choice] input:checked').value`); got != "no" {
		t.Errorf("the picked option before the owner chooses: %q, want the default \"no\"", got)
	}
	if got := p.eval(`[...document.querySelectorAll('main .approval [data-choice] label')].map(l => l.innerText.trim()).join('|')`); got != "no|exactly this command" {
		t.Errorf("the options drawn: %q", got)
	}
	if n := p.eval(`String(document.querySelectorAll('main .approval .remember').length)`); n != "0" {
		t.Errorf("developer.run does not allow a standing permission, yet its card offers remember (%s)", n)
	}
	// At 390 px the card and its choice fit the page; the screenshot is kept.
	p.shoot("home-card-choice", 390)
	p.width(1280)
	// The pick and the approval in one turn of the page: Home redraws when the event log
	// grows, and a node found before a redraw is gone after it.
	if got := p.eval(`(() => { const c = document.querySelector('main .approval'); c.querySelector('[data-choice] input[value="exactly this command"]').click(); c.querySelector('button.primary').click(); return 'clicked'; })()`); got != "clicked" {
		t.Fatalf("pick and approve on Home: %q", got)
	}
	p.poll("Home without the card", `document.querySelector('main').innerText.includes('No approvals are waiting.')`)

	// The pick was decided with the approval, and the command is remembered.
	var decided []struct {
		Tool     string
		Approval struct{ Picks map[string]string }
	}
	s.getJSON(t, "/api/approvals?state=all", &decided)
	picked := false
	for _, a := range decided {
		picked = picked || (a.Tool == "developer.run" && a.Approval.Picks["remember in this workspace"] == "exactly this command")
	}
	if !picked {
		t.Fatalf("approvals = %+v: want developer.run decided with the pick", decided)
	}
	var raw []byte
	waitFor(t, "env remembered in the developer settings", time.Minute, func() bool {
		var settings any
		s.getJSON(t, "/api/developer", &settings)
		raw, _ = json.Marshal(settings)
		return strings.Contains(string(raw), `"command":"env"`) && strings.Contains(string(raw), `"prefix":false`)
	})

	// The same command again runs without a card.
	p.goTo("#/chat/developer")
	p.poll("the first run's answer", `(document.querySelector('#thread')||{innerText:''}).innerText.includes('Ran it once.')`)
	p.typeInto(`form.compose textarea`, "and once more")
	p.click(`form.compose button[type=submit]`)
	p.poll("the second run's answer", `(document.querySelector('#thread')||{innerText:''}).innerText.includes('Ran it again.')`)
	var runs []struct{ Tool string }
	s.getJSON(t, "/api/approvals?state=all", &runs)
	n := 0
	for _, a := range runs {
		if a.Tool == "developer.run" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("developer.run made %d cards, want 1: the remembered command runs without one", n)
	}
}
