package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"buddi/core/action"
	"buddi/core/seal"
	"buddi/plugins"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
	"buddi/sandbox"
)

// The agent's code in its box, through the real binary: in run mode the developer agent
// writes a Makefile and runs `make report` (both auto). The recipe tries what code an agent
// runs could: read the vault, the command line's token and the seal key, find the vault key
// in buddi's environment, see the database's socket, and approve a waiting card over HTTP.
// Each attempt fails, the report reaches the model, and the card is still pending.
func TestAgentCodeIsBoxed(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skipf("this machine cannot sandbox commands, so the box is not tested here: %v", err)
	}
	model, s, vars, home := scriptedServeAt(t)
	ws := t.TempDir()
	if code, out, errOut := runBuddi(t, vars, time.Minute, "developer", "workspace", "set", ws); code != 0 {
		t.Fatalf("workspace set: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "developer", "mode", "run"); code != 0 {
		t.Fatalf("mode run: %d %s%s", code, out, errOut)
	}
	// A card waits for the owner: the code will try to approve it.
	key, err := seal.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn := dbConn(t, home)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	card, err := action.Create(ctx, tx, key, action.Proposal{Call: plugins.Call{Tool: "developer.run", Args: json.RawMessage(`{"command":"npm install"}`), Agent: "developer"},
		Version: "0.1.0", Envelope: plugins.Envelope{Summary: "Run npm install", Effects: []plugins.Effect{plugins.EffectExec}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pid := s.cmd.Process.Pid
	port := strconv.Itoa(s.port)
	request := "POST /api/approvals/" + card.ID + "/approve HTTP/1.1\\r\\nHost: 127.0.0.1:" + port + "\\r\\nOrigin: http://127.0.0.1:" + port +
		"\\r\\nContent-Type: application/json\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\n{}"
	makefile := "SHELL := /bin/bash\n" +
		"report:\n" +
		"\t@echo \"vault: $$(head -c 100 " + filepath.Join(home, "vault.json") + " 2>&1)\"\n" +
		"\t@echo \"token: $$(head -c 100 " + filepath.Join(home, "cli.token") + " 2>&1)\"\n" +
		"\t@echo \"seal: $$(head -c 100 " + filepath.Join(home, "seal.key") + " 2>&1)\"\n" +
		"\t@echo \"environ: $$(tr '\\0' '\\n' < /proc/" + strconv.Itoa(pid) + "/environ 2>&1 | grep -a -e BUDDI_VAULT_KEY -e denied -e 'No such' || echo no-key)\"\n" +
		"\t@echo \"socket: $$(test -S " + filepath.Join(home, "pg", "run", ".s.PGSQL.5432") + " && echo visible || echo hidden)\"\n" +
		"\t@echo \"approve: $$(exec 3<>/dev/tcp/127.0.0.1/" + port + " && printf '" + request + "' >&3 && head -1 <&3)\"\n"
	write, _ := json.Marshal(map[string]string{"path": "Makefile", "content": makefile})
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_w", Name: provider.WireToolName("developer.write"), Args: string(write)}),
		pt.Tools(pt.ToolCall{ID: "toolu_r", Name: provider.WireToolName("developer.run"), Args: `{"command":"make report"}`}),
		pt.Text("Reported."),
	)
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "ask", "--agent", "@dev", "run the report"); code != 0 || !strings.Contains(out, "Reported.") {
		t.Fatalf("ask: %d\n%s\n%s\n%s", code, out, errOut, s.log.String())
	}
	reqs := model.Requests()
	report := string(reqs[len(reqs)-1].Body) // what the model read last: the run's output
	for _, want := range []string{"vault: head: cannot open", "token: head: cannot open", "seal: head: cannot open", "socket: hidden", "approve: HTTP/1.1 401"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	vaultKey := "aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE="
	for _, leak := range []string{vaultKey, readOrEmpty(filepath.Join(home, "cli.token")), readOrEmpty(filepath.Join(home, "seal.key"))} {
		if leak != "" && strings.Contains(report, strings.TrimSpace(leak)) {
			t.Errorf("the model was handed a secret (%.12s…):\n%s", leak, report)
		}
	}
	if strings.Contains(report, "environ: BUDDI_VAULT_KEY") {
		t.Errorf("the boxed code read buddi's environment:\n%s", report)
	}
	// buddi dropped the key from its environment, even as /proc shows it to its own account.
	if environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && strings.Contains(string(environ), vaultKey) {
		t.Error("buddi's /proc/<pid>/environ still holds BUDDI_VAULT_KEY")
	}
	var state string
	if err := conn.QueryRow(ctx, `SELECT state FROM core.approvals WHERE action_id = $1`, card.ID).Scan(&state); err != nil || state != "pending" {
		t.Errorf("the card is %q (%v), want still pending", state, err)
	}
	var refused int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'dashboard.refused'`).Scan(&refused); err != nil || refused == 0 {
		t.Errorf("no dashboard.refused event (%v)", err)
	}
}

func readOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
