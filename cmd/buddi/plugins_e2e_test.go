package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"buddi/health"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// memoryServerVersion is the published MCP memory server the end-to-end test installs.
const memoryServerVersion = "@modelcontextprotocol/server-memory@2026.8.31"

// installMemoryServer installs the reference MCP memory server from npm into a directory of
// the test and returns its entry point; the test is skipped only when npm is absent.
func installMemoryServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the end-to-end test of an installed MCP plugin needs it to install " + memoryServerVersion)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--prefix", dir, memoryServerVersion).CombinedOutput()
	if err != nil {
		t.Fatalf("npm install %s: %v\n%s", memoryServerVersion, err, out)
	}
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the memory server's entry point: %v", err)
	}
	return entry
}

// memoryManifest is the buddi manifest the owner gives the memory server: its reads auto,
// its writes gated.
const memoryManifest = `{
  "description": "A knowledge graph the agents remember things in.",
  "tools": {
    "read_graph":   {"tier": "auto",  "effects": ["read"]},
    "search_nodes": {"tier": "auto",  "effects": ["read"]},
    "open_nodes":   {"tier": "auto",  "effects": ["read"]},
    "create_entities":     {"tier": "gated", "effects": ["state_write"]},
    "create_relations":    {"tier": "gated", "effects": ["state_write"]},
    "add_observations":    {"tier": "gated", "effects": ["state_write"]},
    "delete_entities":     {"tier": "gated", "effects": ["state_write"]},
    "delete_observations": {"tier": "gated", "effects": ["state_write"]},
    "delete_relations":    {"tier": "gated", "effects": ["state_write"]}
  },
  "network": []
}`

// devWithMemory is @dev in the owner's directory with the memory tools in its grant.
const devWithMemory = "---\nid: developer\nhandle: \"@dev\"\nname: Developer\ntools:\n  - graph.create_entities\n  - graph.read_graph\n---\nYou remember things for the owner.\n"

// devWithout is the same agent with the memory tools taken out of its grant.
const devWithout = "---\nid: developer\nhandle: \"@dev\"\nname: Developer\ntools:\n  - conversation.ask\n---\nYou help the owner.\n"

// A real third-party MCP server from npm installed as a plugin: the contribution is shown,
// --yes records it, buddi serve runs it under root/plugins, a gated tool's call waits for
// an approval given on the dashboard's API and then runs, its result in the transcript; the
// server killed with SIGKILL is started again by its supervisor and a later auto call
// works; plugins remove is refused while @dev's grant names its tools and then keeps its
// data.
func TestInstalledMCPPluginEndToEnd(t *testing.T) {
	entry := installMemoryServer(t)
	data := t.TempDir()
	memoryFile := filepath.Join(data, "memory.jsonl")
	manifest := filepath.Join(data, "buddi-plugin.json")
	if err := os.WriteFile(manifest, []byte(memoryManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	add := []string{"plugins", "add", "graph", "--manifest", manifest, "--env", "MEMORY_FILE_PATH=" + memoryFile}
	var home string
	model, s, vars, home := scriptedServeWith(t, nil, func(vars []string) {
		for _, kv := range vars {
			if v, ok := strings.CutPrefix(kv, "BUDDI_HOME="); ok {
				home = v
			}
		}
		code, out, errOut := runBuddi(t, vars, 2*time.Minute, append(add, "--", "node", entry)...)
		if code != 0 {
			t.Fatalf("plugins add: %d\n%s%s", code, out, errOut)
		}
		for _, want := range []string{"9 tools: 3 auto (they run the first time a model calls them", "6 gated",
			"graph.create_entities  [gated; state_write]", "arguments: entities (array, required)", "Hosts it reaches: none declared"} {
			if !strings.Contains(out, want) {
				t.Errorf("the contribution lacks %q:\n%s", want, out)
			}
		}
		if strings.Index(out, "graph.search_nodes") > strings.Index(out, "graph.add_observations") {
			t.Errorf("the auto tools are not listed first:\n%s", out)
		}
		if code, out, _ := runBuddi(t, vars, time.Minute, "plugins", "list"); code != 0 || !strings.Contains(out, "no plugins are installed") {
			t.Fatalf("installed without --yes: %s", out)
		}
		if code, out, errOut := runBuddi(t, vars, 2*time.Minute, append(add, "--yes", "--", "node", entry)...); code != 0 {
			t.Fatalf("plugins add --yes: %d\n%s%s", code, out, errOut)
		}
		if err := os.MkdirAll(filepath.Join(home, "agents"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "agents", "dev.md"), []byte(devWithMemory), 0o600); err != nil {
			t.Fatal(err)
		}
	})

	// Served: the plugin runs under root/plugins.
	plugin := func() (health.Actor, bool) {
		rep, err := s.fetchHealth()
		if err != nil {
			return health.Actor{}, false
		}
		for _, a := range rep.Actors {
			if a.Path == "root/plugins/graph" {
				return a, true
			}
		}
		return health.Actor{}, false
	}
	waitFor(t, "root/plugins/graph to run", time.Minute, func() bool { a, ok := plugin(); return ok && a.State == "running" })

	// A gated call waits for the owner, who approves it on the dashboard; then it runs.
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_mem1", Name: provider.WireToolName("graph.create_entities"),
			Args: `{"entities":[{"name":"Ada","entityType":"person","observations":["drinks green tea"]}]}`}),
		pt.Text("I will remember Ada."),
	)
	conv, _ := postMessage(t, s, map[string]any{"agent": "@dev", "text": "remember Ada, who drinks green tea", "surface": "terminal"})
	var card struct {
		ID   string `json:"id"`
		Tool string `json:"tool"`
	}
	waitFor(t, "the approval of graph.create_entities", time.Minute, func() bool {
		var cards []struct {
			ID   string `json:"id"`
			Tool string `json:"tool"`
		}
		if err := pluginsGetJSON(s, "/api/approvals", &cards); err != nil {
			return false
		}
		for _, c := range cards {
			if c.Tool == "graph.create_entities" {
				card = c
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(memoryFile); err == nil {
		t.Fatal("the gated call wrote the memory before it was approved")
	}
	resp, err := s.request("POST", "/api/approvals/"+card.ID+"/approve", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("approve on the dashboard: %s %s", resp.Status, body)
	}
	waitFor(t, "the approved call to reach the memory file", time.Minute, func() bool {
		b, err := os.ReadFile(memoryFile)
		return err == nil && bytes.Contains(b, []byte("drinks green tea"))
	})
	waitFor(t, "the turn to finish with the tool's result in the transcript", time.Minute, func() bool {
		var c struct {
			Transcript json.RawMessage `json:"transcript"`
		}
		if err := pluginsGetJSON(s, "/api/conversations/"+conv, &c); err != nil {
			return false
		}
		return bytes.Contains(c.Transcript, []byte("I will remember Ada.")) && bytes.Contains(c.Transcript, []byte("drinks green tea"))
	})

	// The server killed: its supervisor starts it again, and a later auto call works.
	before, _ := plugin()
	pid := memoryServerPid(t, entry)
	if pid <= 0 {
		t.Fatalf("not one memory server runs: %v", processesUnder(entry))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the memory server to be started again", time.Minute, func() bool {
		a, ok := plugin()
		return ok && a.Restarts > before.Restarts && a.State == "running" && len(processesUnder(entry)) == 1 && memoryServerPid(t, entry) != pid
	})
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_mem2", Name: provider.WireToolName("graph.read_graph"), Args: `{}`}),
		pt.Text("Ada drinks green tea."),
	)
	served := len(model.Served())
	postMessage(t, s, map[string]any{"agent": "@dev", "text": "what do you know?", "surface": "terminal"})
	waitFor(t, "the auto call's result to reach the model", time.Minute, func() bool {
		all := model.Served()
		return len(all) >= served+2 && bytes.Contains(all[served+1].Body, []byte("drinks green tea"))
	})

	// Uninstall: refused while @dev's grant names the tools, then done, keeping the data.
	if code := s.stop(); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	code, _, errOut := runBuddi(t, vars, 2*time.Minute, "plugins", "remove", "graph")
	if code != 1 || !strings.Contains(errOut, filepath.Join(home, "agents", "dev.md")) || !strings.Contains(errOut, "graph.create_entities") {
		t.Fatalf("remove while a grant names its tools: %d %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(home, "agents", "dev.md"), []byte(devWithout), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "plugins", "remove", "graph"); code != 0 || !strings.Contains(out, "plugin graph removed") {
		t.Fatalf("remove: %d %s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(memoryFile); err != nil || !bytes.Contains(b, []byte("Ada")) {
		t.Fatalf("the plugin's data after remove: %q %v", b, err)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "plugins", "list"); code != 0 || !strings.Contains(out, "no plugins are installed") {
		t.Fatalf("list after remove: %s", out)
	}
}

// pluginsGetJSON reads a dashboard route as the command line does.
func pluginsGetJSON(s *served, path string, v any) error {
	resp, err := s.get(path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &exitError{code: resp.StatusCode}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// memoryServerPid is the pid of the one live process running the memory server.
func memoryServerPid(t *testing.T, entry string) int {
	t.Helper()
	procs := processesUnder(entry)
	if len(procs) != 1 {
		return 0
	}
	pid, err := strconv.Atoi(procs[0][:strings.IndexByte(procs[0], ':')])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
