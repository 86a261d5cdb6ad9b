package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// Agents that make agents, end to end through buddi serve: the shipped agent-father's call
// to platform.create_agent raises a card holding the whole file and the resolved grant; the
// file is written only once the owner approves on the dashboard, into the owner's agents
// directory; then the new @handle answers (given a model account on its Settings page)
// without a restart.
func TestAgentFatherMakesAnAgentThatAnswersAtOnce(t *testing.T) {
	model, s, _, home := scriptedServeWith(t, nil, func(vars []string) {
		if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@father", "--account", "scripted", "--model", "model-one"); code != 0 {
			t.Fatalf("agents set @father: %d %s%s", code, out, errOut)
		}
	})
	conn := dbConn(t, home)
	ctx := context.Background()
	finished := func(runID string) bool {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'run.finished' AND payload->>'run_id' = $1`, runID).Scan(&n)
		return err == nil && n == 1
	}
	file := filepath.Join(home, "agents", "scout.md")
	persona := "You find things out for the owner and say where you found them."
	args, _ := json.Marshal(map[string]any{"id": "scout", "handle": "@scout", "name": "Scout",
		"tools": []string{"platform.roster", "host.exec"}, "persona": persona})

	// The interview has happened; the agent-father proposes.
	model.Script(pt.Tools(pt.ToolCall{ID: "toolu_1", Name: provider.WireToolName("platform.create_agent"), Args: string(args)}),
		pt.Text("A card waits for you with @scout's whole file."))
	_, run1 := postMessage(t, s, map[string]any{"agent": "@father", "text": "I want a new agent that finds things out.", "surface": "dashboard", "new": true})
	var card hostCard
	waitFor(t, "the create_agent card", time.Minute, func() bool {
		var cards []hostCard
		s.getJSON(t, "/api/approvals", &cards)
		for _, c := range cards {
			if c.Tool == "platform.create_agent" {
				card = c
				return true
			}
		}
		return false
	})
	whole := "---\nid: scout\nhandle: \"@scout\"\nname: Scout\ntools:\n    - platform.roster\n    - host.exec\n---\n" + persona + "\n"
	for _, want := range []string{"Create the agent @scout (Scout) with 2 tools", "The whole file, " + file + ":\n" + whole,
		"Its grant (2 tools; 1 run without asking):", "platform.roster  auto", "host.exec        gated"} {
		if !strings.Contains(card.Card, want) {
			t.Errorf("the card does not show %q:\n%s", want, card.Card)
		}
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("the file was written before the approval")
	}
	var before []map[string]any
	s.getJSON(t, "/api/agents/settings", &struct {
		Agents *[]map[string]any `json:"agents"`
	}{&before})
	for _, a := range before {
		if a["id"] == "scout" {
			t.Fatal("the dashboard knows @scout before the approval")
		}
	}

	// Approved on the dashboard: the file is the owner's, and the father's run goes on.
	s.post(t, "/api/approvals/"+card.ID+"/approve", `{}`, http.StatusOK, nil)
	waitFor(t, "the agent-father's run to finish", time.Minute, func() bool { return finished(run1) })
	got, err := os.ReadFile(file)
	if err != nil || string(got) != whole {
		t.Fatalf("the written file: %v\n%s", err, got)
	}
	if served := model.Served(); !strings.Contains(string(served[len(served)-1].Body), "Created @scout (Scout)") {
		t.Errorf("the father was not told the agent exists: %s", served[len(served)-1].Body)
	}

	// The new agent answers without a restart: the dashboard gives it an account, and a
	// message to @scout runs with its persona.
	s.post(t, "/api/agents/scout/account", `{"account":"scripted","model":"model-one"}`, http.StatusOK, nil)
	model.Script(pt.Text("Scout here: what shall I find?"))
	_, run2 := postMessage(t, s, map[string]any{"agent": "@scout", "text": "hello", "surface": "dashboard", "new": true})
	waitFor(t, "@scout's run to finish", time.Minute, func() bool { return finished(run2) })
	served := model.Served()
	if last := string(served[len(served)-1].Body); !strings.Contains(last, persona) || !strings.Contains(last, provider.WireToolName("platform.roster")) {
		t.Fatalf("@scout's request does not carry its persona and grant:\n%s", last)
	}
}
