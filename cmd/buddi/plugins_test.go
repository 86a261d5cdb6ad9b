package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	mcpServerOnce sync.Once
	mcpServerPath string
	mcpServerErr  error
)

// testMCPServer is plugins/mcp's test server, built once for the tests that install it.
func testMCPServer(t *testing.T) string {
	t.Helper()
	mcpServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "buddi-mcp-server-")
		if err != nil {
			mcpServerErr = err
			return
		}
		mcpServerPath = filepath.Join(dir, "server")
		out, err := exec.Command("go", "build", "-o", mcpServerPath, "../../plugins/mcp/testdata/server").CombinedOutput()
		if err != nil {
			mcpServerErr = err
			t.Logf("%s", out)
		}
	})
	if mcpServerErr != nil {
		t.Fatalf("build the test MCP server: %v", mcpServerErr)
	}
	return mcpServerPath
}

// The command line's plugins: add shows the contribution and installs nothing without
// --yes; compiled-in names and non-loopback URLs are refused; list reads plugins.json with
// no database at all; a tier set by the owner is kept; remove is refused while an agent's
// grant names the plugin's tools, naming the agent's file.
func TestPluginsCommandLine(t *testing.T) {
	server := testMCPServer(t)
	home, _, vars := env(t)
	manifest := filepath.Join(t.TempDir(), "buddi-plugin.json")
	if err := os.WriteFile(manifest, []byte(`{"version":"9.9","tools":{"echo":{"tier":"auto","effects":["read"]}},
		"network":["example.org: the text you echo"],"agents":[{"id":"echoer","handle":"@echo","tools":["testy.echo"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runBuddi(t, vars, time.Minute, "plugins", "add", "testy", "--manifest", manifest, "--", server)
	if code != 0 || !strings.Contains(errOut, "run the same command with --yes") {
		t.Fatalf("add without --yes: %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"Plugin testy 9.9", "5 tools: 1 auto", "testy.echo  [auto; read]", "arguments: text (string, required)",
		"example.org: the text you echo", "echoer @echo, with the tools: testy.echo"} {
		if !strings.Contains(out, want) {
			t.Errorf("the contribution lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "plugins.json")); err == nil {
		t.Fatal("plugins.json was written without --yes")
	}

	if code, _, errOut := runBuddi(t, vars, time.Minute, "plugins", "add", "developer", "--", server); code != 2 || !strings.Contains(errOut, "compiled into buddi") {
		t.Fatalf("a compiled-in name: %d %s", code, errOut)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "plugins", "add", "far", "--url", "http://192.0.2.1:9/mcp"); code != 2 || !strings.Contains(errOut, "loopback") {
		t.Fatalf("a URL off loopback: %d %s", code, errOut)
	}

	if code, out, errOut := runBuddi(t, vars, time.Minute, "plugins", "add", "testy", "--manifest", manifest, "--yes", "--", server); code != 0 || !strings.Contains(errOut, "plugin testy installed") {
		t.Fatalf("add --yes: %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "plugins", "add", "testy", "--", server); code != 1 || !strings.Contains(errOut, "--upgrade") {
		t.Fatalf("a second add: %d %s", code, errOut)
	}
	// No database was made for this home: list answers from the file.
	code, out, errOut = runBuddi(t, vars, time.Minute, "plugins", "list", "--json")
	var list []struct {
		Name    string
		Version string
		Tools   []struct {
			Name string
			Tier string
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].Name != "testy" || list[0].Version != "9.9" {
		t.Fatalf("plugins list --json: %d %s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "pg")); err == nil {
		t.Fatal("a database was made for plugins list")
	}

	if code, out, errOut := runBuddi(t, vars, time.Minute, "plugins", "tier", "testy", "note", "auto"); code != 0 || !strings.Contains(out, "testy.note is auto now") {
		t.Fatalf("tier: %d %s%s", code, out, errOut)
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "plugins", "tier", "testy", "note", "session"); code != 2 {
		t.Fatalf("a session tier: exit %d", code)
	}
	// An upgrade with nothing changed keeps the owner's tier.
	code, out, errOut = runBuddi(t, vars, time.Minute, "plugins", "add", "testy", "--upgrade", "--yes")
	if code != 0 || !strings.Contains(out, "No tool changed") || !strings.Contains(out, "testy.note  [auto; exec]") {
		t.Fatalf("upgrade: %d\n%s%s", code, out, errOut)
	}
	// An upgrade that changed the tools shows what changed.
	code, out, errOut = runBuddi(t, vars, time.Minute, "plugins", "add", "testy", "--upgrade", "--env", "TEST_VARIANT=changed", "--", server)
	if code != 0 || !strings.Contains(out, "echo's arguments changed") || !strings.Contains(out, "note is no longer listed") || !strings.Contains(out, "extra is new") {
		t.Fatalf("upgrade with changes: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "plugins", "show", "testy"); code != 0 || !strings.Contains(out, "testy.note") {
		t.Fatalf("show after an upgrade that was not accepted: %s", out)
	}

	agentsDir := filepath.Join(home, "agents")
	if err := os.MkdirAll(agentsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(agentsDir, "echoer.md")
	if err := os.WriteFile(file, []byte("---\nid: echoer\nhandle: \"@echo\"\nname: Echoer\ntools:\n  - testy.echo\n---\nYou echo.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "plugins", "remove", "testy"); code != 1 || !strings.Contains(errOut, file) || !strings.Contains(errOut, "testy.echo") {
		t.Fatalf("remove while a grant names its tools: %d %s", code, errOut)
	}
}
