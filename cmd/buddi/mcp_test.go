package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// bearerTransport sends a token with every request, as an MCP client configured with one does.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b != "" {
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpOver connects the SDK's own client to buddi's /mcp with token.
func mcpOver(ctx context.Context, port int, token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test client", Version: "1"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port),
		HTTPClient: &http.Client{Transport: bearerTransport(token)}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}

func callText(t *testing.T, cs *mcp.ClientSession, ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res, b.String()
}

func toolNames(t *testing.T, cs *mcp.ClientSession, ctx context.Context) []string {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func createToken(t *testing.T, vars []string, args ...string) string {
	t.Helper()
	code, out, errOut := runBuddi(t, vars, time.Minute, append([]string{"tokens", "create"}, args...)...)
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "buddi_mcp_") {
		t.Fatalf("tokens create %v: %d %s%s", args, code, out, errOut)
	}
	return strings.TrimSpace(out)
}

// buddi as an MCP server: tokens are created, listed without their value and revoked; /mcp
// refuses a request without a working token with a 401; a token asks an agent and reads the
// reply; an ask that reaches a gated tool says it waits for the owner, the approval is the
// owner's on their own API, and the same conversation carries on once it is decided; a
// read-only token reads and cannot ask; `buddi mcp` on stdio does the same through the
// running buddi, and cannot write in another caller's conversation.
func TestMCPServerTokensHTTPAndStdio(t *testing.T) {
	// @planner holds one gated tool, schedule.propose.
	model, s, vars, _ := scriptedServeWith(t, nil, func(vars []string) {
		home := ""
		for _, kv := range vars {
			if v, ok := strings.CutPrefix(kv, "BUDDI_HOME="); ok {
				home = v
			}
		}
		if err := os.MkdirAll(filepath.Join(home, "agents"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "agents", "planner.md"), []byte("---\nid: planner\nhandle: \"@planner\"\nname: Planner\n"+
			"tools: [schedule.propose]\n---\nYou plan the owner's standing schedules.\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@planner", "--account", "scripted", "--model", "model-one"); code != 0 {
			t.Fatalf("agents set @planner: %d %s%s", code, out, errOut)
		}
	})
	model.Script(
		pt.Text("Hello there."),
		pt.Tools(pt.ToolCall{ID: "toolu_1", Name: provider.WireToolName("developer.workspace"), Args: `{"directory":"/tmp"}`}),
		pt.Text("I could not."),
		pt.Tools(pt.ToolCall{ID: "toolu_2", Name: provider.WireToolName("schedule.propose"),
			Args: `{"name":"greeting","cron":"0 9 * * 1","prompt":"Say good morning.","stop_when":"the owner says stop"}`}),
		pt.Text("The schedule ", "is set."),
		pt.Text("Hi from stdio."),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	full := createToken(t, vars, "laptop")
	readOnly := createToken(t, vars, "watcher", "--read-only")
	code, out, errOut := runBuddi(t, vars, time.Minute, "tokens", "list", "--json")
	if code != 0 {
		t.Fatalf("tokens list: %d %s", code, errOut)
	}
	if strings.Contains(out, full) || strings.Contains(out, readOnly) {
		t.Fatalf("tokens list printed a token's value:\n%s", out)
	}
	var listed []struct {
		Name     string `json:"name"`
		ReadOnly bool   `json:"read_only"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 2 || listed[0].Name != "laptop" || listed[0].ReadOnly || !listed[1].ReadOnly {
		t.Fatalf("tokens list --json: %v %s", err, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "tokens", "create", "laptop"); code == 0 || !strings.Contains(errOut, "already has this name") {
		t.Fatalf("a second token named laptop: %d %s", code, errOut)
	}

	// Without a working token: 401 and nothing else.
	for _, token := range []string{"", "buddi_mcp_made-up", readOnly + "x"} {
		req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port),
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("/mcp with token %q: %d, want 401", token, resp.StatusCode)
		}
	}
	if _, err := mcpOver(ctx, s.port, ""); err == nil {
		t.Fatal("the SDK's client connected with no token")
	}

	// A working token: the tools, the agents, a reply.
	cs, err := mcpOver(ctx, s.port, full)
	if err != nil {
		t.Fatalf("connect with a token: %v\n%s", err, s.log.String())
	}
	defer cs.Close()
	if names := strings.Join(toolNames(t, cs, ctx), ","); names != "agents_list,approvals_list,ask_agent" {
		t.Fatalf("tools: %s", names)
	}
	if _, text := callText(t, cs, ctx, "agents_list", nil); !strings.Contains(text, "@dev (") || !strings.Contains(text, "): can run") {
		t.Fatalf("agents_list: %s", text)
	}
	res, text := callText(t, cs, ctx, "ask_agent", map[string]any{"agent": "@dev", "message": "hello"})
	if res.IsError || text != "Hello there." {
		t.Fatalf("ask_agent: %v %q\n%s", res.IsError, text, s.log.String())
	}
	first := structured(t, res)
	if first["status"] != "finished" || first["conversation_id"] == "" {
		t.Fatalf("ask_agent's outcome: %v", first)
	}
	if body := string(model.Served()[0].Body); !strings.Contains(body, "through buddi mcp") {
		t.Fatalf("the run was not told its caller is buddi mcp: %s", body)
	}

	// A session-tier tool never runs for a remote caller: there is no owner request behind it.
	if _, text := callText(t, cs, ctx, "ask_agent", map[string]any{"agent": "@dev", "message": "work in /tmp"}); text != "I could not." {
		t.Fatalf("ask_agent: %q", text)
	}
	if body := string(model.Served()[2].Body); !strings.Contains(body, "there is no owner request behind it") {
		t.Fatalf("developer.workspace was not refused for the remote caller: %s", body)
	}

	// A gated tool: the run waits for the owner, who sees the approval on their own API.
	res, text = callText(t, cs, ctx, "ask_agent", map[string]any{"agent": "@planner", "message": "greet me on mondays"})
	asked := structured(t, res)
	if asked["status"] != "waiting_for_owner" || !strings.HasPrefix(text, "Waiting for the owner's approval on their surfaces: ") {
		t.Fatalf("an ask that reached a gated tool: %q %v", text, asked)
	}
	approvals, _ := asked["approvals"].([]any)
	if len(approvals) != 1 {
		t.Fatalf("approvals: %v", asked)
	}
	approval := approvals[0].(map[string]any)
	id, summary := approval["id"].(string), approval["summary"].(string)
	if id == "" || summary == "" || !strings.Contains(text, summary) || !strings.Contains(text, id) {
		t.Fatalf("the waiting sentence does not name the approval: %q %v", text, approval)
	}
	resp, err := s.get("/api/approvals")
	if err != nil {
		t.Fatal(err)
	}
	var pending []struct {
		ID       string `json:"id"`
		Envelope struct {
			Summary string `json:"summary"`
		} `json:"envelope"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&pending)
	resp.Body.Close()
	if len(pending) != 1 || pending[0].ID != id || pending[0].Envelope.Summary != summary {
		t.Fatalf("GET /api/approvals: %+v, want %s %q", pending, id, summary)
	}
	if _, text := callText(t, cs, ctx, "approvals_list", nil); !strings.Contains(text, id) || !strings.Contains(text, summary) {
		t.Fatalf("approvals_list: %s", text)
	}
	// The caller cannot approve; the owner does, and the same conversation carries on.
	if code, out, errOut := runBuddi(t, vars, time.Minute, "approvals", "approve", id); code != 0 {
		t.Fatalf("approve: %d %s%s", code, out, errOut)
	}
	res, text = callText(t, cs, ctx, "ask_agent", map[string]any{"conversation_id": asked["conversation_id"], "wait_seconds": 60})
	if res.IsError || text != "The schedule is set." {
		t.Fatalf("carrying on after the approval: %q %v\n%s", text, structured(t, res), s.log.String())
	}

	// A read-only token reads, and is not offered ask_agent nor let call it.
	ro, err := mcpOver(ctx, s.port, readOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if names := strings.Join(toolNames(t, ro, ctx), ","); names != "agents_list,approvals_list" {
		t.Fatalf("a read-only token's tools: %s", names)
	}
	if res, err := ro.CallTool(ctx, &mcp.CallToolParams{Name: "ask_agent", Arguments: map[string]any{"message": "hi"}}); err == nil && !res.IsError {
		t.Fatal("a read-only token asked an agent")
	}
	if _, text := callText(t, ro, ctx, "approvals_list", nil); text != "Nothing waits for the owner's decision." {
		t.Fatalf("approvals_list, read-only: %s", text)
	}

	// Revoked: the next request is a 401.
	if code, out, errOut := runBuddi(t, vars, time.Minute, "tokens", "revoke", "laptop"); code != 0 {
		t.Fatalf("tokens revoke: %d %s%s", code, out, errOut)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agents_list"}); err == nil {
		t.Fatal("a revoked token still called a tool")
	}
	if _, err := mcpOver(ctx, s.port, full); err == nil {
		t.Fatal("a revoked token connected")
	}

	// buddi mcp on stdio, as a client starts it.
	cmd := exec.Command(binary, "mcp")
	cmd.Env = vars
	stdio, err := mcp.NewClient(&mcp.Implementation{Name: "stdio client", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("buddi mcp: %v\n%s", err, s.log.String())
	}
	defer stdio.Close()
	if names := strings.Join(toolNames(t, stdio, ctx), ","); names != "agents_list,approvals_list,ask_agent" {
		t.Fatalf("buddi mcp's tools: %s", names)
	}
	res, text = callText(t, stdio, ctx, "ask_agent", map[string]any{"agent": "@dev", "message": "hi"})
	if res.IsError || text != "Hi from stdio." {
		t.Fatalf("ask_agent through buddi mcp: %q", text)
	}
	res, text = callText(t, stdio, ctx, "ask_agent", map[string]any{"conversation_id": first["conversation_id"], "message": "let me in"})
	if !res.IsError || !strings.Contains(text, "is not one ask_agent started for you") {
		t.Fatalf("buddi mcp wrote in another caller's conversation: %v %q", res.IsError, text)
	}
}

// structured is a tool result's structured content as a map.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return m
}
