package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// The concierge hands a request to @dev with agent.delegate: @dev works in a conversation of
// its own, marked delegated, where its session-tier developer tools are refused (seed 000: a
// delegate of the developer agent gets none of them) and a gated tool (host.exec, in the
// owner's copy of @dev's file) stops at a card; the card counts on both agents in the
// attention rail; approved, it lets @dev finish, and the concierge reports @dev's answer,
// which came back as the tool's result.
func TestConciergeDelegatesToDev(t *testing.T) {
	model, s, _, _ := scriptedServeWith(t, nil, func(vars []string) {
		if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@buddi", "--account", "scripted", "--model", "model-one"); code != 0 {
			t.Fatalf("agents set @buddi: %d %s%s", code, out, errOut)
		}
		// The owner's @dev: the shipped file with host.exec added to its grant.
		shipped, err := os.ReadFile(filepath.Join("..", "..", "examples", "agents", "dev.md"))
		if err != nil {
			t.Fatal(err)
		}
		file := strings.Replace(string(shipped), "  - conversation.ask\n", "  - conversation.ask\n  - host.exec\n", 1)
		if file == string(shipped) {
			t.Fatal("the shipped dev.md has no conversation.ask line to add host.exec after")
		}
		home := ""
		for _, kv := range vars {
			if v, ok := strings.CutPrefix(kv, "BUDDI_HOME="); ok {
				home = v
			}
		}
		if err := os.MkdirAll(filepath.Join(home, "agents"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "agents", "dev.md"), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	dir := t.TempDir()
	model.Script(
		// The concierge hands the request over.
		pt.Tools(pt.ToolCall{ID: "toolu_d", Name: provider.WireToolName("agent.delegate"),
			Args: `{"agent":"@dev","question":"Mark the owner's project in ` + dir + ` as ready."}`}),
		// @dev, in its own conversation: its developer tools are refused there ...
		pt.Tools(pt.ToolCall{ID: "toolu_w", Name: provider.WireToolName("developer.workspace"), Args: `{"directory":"` + dir + `"}`}),
		// ... and a gated tool stops at a card.
		pt.Tools(pt.ToolCall{ID: "toolu_x", Name: provider.WireToolName("host.exec"),
			Args: `{"language":"bash","script":"echo ready > ready.txt","cwd":"` + dir + `"}`}),
		pt.Text("The project in "+dir+" is marked ready."),
		// The concierge, with @dev's answer as the tool's result.
		pt.Text("Done: @dev marked your project ready."),
	)
	conv, _ := postMessage(t, s, map[string]any{"agent": "@buddi", "text": "mark my project ready", "surface": "dashboard"})

	// @dev's card is pending, and counted on @dev and on the concierge that asked.
	var card struct {
		ID              string `json:"id"`
		Agent           string `json:"agent"`
		ConversationID  string `json:"conversation_id"`
		DelegationDepth int    `json:"delegation_depth"`
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the concierge's conversation:\n%s", conversationOf(t, s, conv).text())
		}
	})
	waitFor(t, "@dev's card", time.Minute, func() bool {
		var pending []json.RawMessage
		s.getJSON(t, "/api/approvals", &pending)
		for _, raw := range pending {
			var c struct {
				Tool string
			}
			if json.Unmarshal(raw, &c) == nil && c.Tool == "host.exec" {
				return json.Unmarshal(raw, &card) == nil
			}
		}
		return false
	})
	if card.Agent != "developer" || card.ConversationID == conv || card.DelegationDepth != 1 {
		t.Fatalf("the card = %+v: want @dev's, in a conversation of its own, one delegation deep (the concierge's is %s)", card, conv)
	}
	if got := pendingOnRail(t, s); got["concierge"] != 1 || got["developer"] != 1 {
		t.Fatalf("attention rail pending = %v: want the card on both @buddi and @dev", got)
	}
	// The colleague's run is marked delegated, by the concierge, from the concierge's run.
	devConv := conversationOf(t, s, card.ConversationID).text()
	if !strings.Contains(devConv, "@buddi (Concierge) asks you this") {
		t.Fatalf("@dev's conversation does not start with the concierge's question:\n%s", devConv)
	}
	if !strings.Contains(devConv, "it comes from a delegated run (depth 1)") {
		t.Fatalf("@dev's session-tier developer.workspace was not refused in the delegated run:\n%s", devConv)
	}

	// Approved, @dev finishes, and the concierge reports its answer.
	resp, err := s.request("POST", "/api/approvals/"+card.ID+"/approve", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("approve: %s %s", resp.Status, body)
	}
	waitFor(t, "the concierge's report", 2*time.Minute, func() bool {
		return strings.Contains(conversationOf(t, s, conv).text(), "Done: @dev marked your project ready.")
	})
	got := conversationOf(t, s, conv).text()
	if !strings.Contains(got, "@dev answered (its conversation is "+card.ConversationID+")") || !strings.Contains(got, "is marked ready.") {
		t.Fatalf("the concierge's transcript does not hold @dev's answer as the tool's result:\n%s", got)
	}
	served := model.Served()
	if last := string(served[len(served)-1].Body); !strings.Contains(last, "is marked ready.") {
		t.Fatalf("the concierge's last step did not carry @dev's answer:\n%s", last)
	}
	if got := pendingOnRail(t, s); got["concierge"] != 0 || got["developer"] != 0 {
		t.Fatalf("attention rail pending after the approval = %v: want none", got)
	}
	if got := conversationOf(t, s, card.ConversationID).text(); !strings.Contains(got, "is marked ready.") {
		t.Fatalf("@dev's conversation does not hold its answer:\n%s", got)
	}
	var events struct {
		Events []struct {
			Kind    string          `json:"kind"`
			Payload json.RawMessage `json:"payload"`
		} `json:"events"`
	}
	s.getJSON(t, "/api/events?kind=run.started&limit=50", &events)
	delegated := false
	for _, e := range events.Events {
		var p struct {
			Agent       string   `json:"agent"`
			DelegatedBy string   `json:"delegated_by"`
			Depth       int      `json:"depth"`
			Chain       []string `json:"chain"`
			AskedIn     string   `json:"asked_in"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.Agent == "developer" && p.DelegatedBy == "concierge" && p.Depth == 1 &&
			len(p.Chain) == 1 && p.Chain[0] == "concierge" && p.AskedIn == conv {
			delegated = true
		}
	}
	if !delegated {
		t.Fatalf("no run.started of @dev marked delegated by the concierge: %+v", events.Events)
	}
}

// pendingOnRail is GET /api/attention's pending count per agent id.
func pendingOnRail(t *testing.T, s *served) map[string]int {
	t.Helper()
	var rail struct {
		Agents []struct {
			ID      string `json:"id"`
			Pending int    `json:"pending"`
		} `json:"agents"`
	}
	s.getJSON(t, "/api/attention", &rail)
	out := map[string]int{}
	for _, a := range rail.Agents {
		out[a.ID] = a.Pending
	}
	return out
}
