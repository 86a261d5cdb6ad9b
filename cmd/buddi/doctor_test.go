package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/internal/pgtest"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

type doctorJSON struct {
	Healthy  bool `json:"healthy"`
	ExitCode int  `json:"exit_code"`
	Checks   []struct {
		Name     string `json:"name"`
		Status   string `json:"status"`
		Sentence string `json:"sentence"`
		Fix      string `json:"fix"`
	} `json:"checks"`
	FailedJobs []struct {
		Kind      string `json:"kind"`
		LastError string `json:"last_error"`
	} `json:"failed_jobs"`
}

func (d doctorJSON) check(name string) (ok bool, detail, fix string, found bool) {
	for _, c := range d.Checks {
		if c.Name == name {
			return c.Status == "ok", c.Sentence, c.Fix, true
		}
	}
	return false, "", "", false
}

// status is the named check's status ("" when there is none) and its sentence and fix.
func (d doctorJSON) status(name string) (status, sentence, fix string) {
	for _, c := range d.Checks {
		if c.Name == name {
			return c.Status, c.Sentence, c.Fix
		}
	}
	return "", "", ""
}

func runDoctor(t *testing.T, vars []string) (int, doctorJSON) {
	t.Helper()
	code, out, errOut := runBuddi(t, vars, time.Minute, "doctor", "--json")
	var d doctorJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("doctor --json is not JSON (%v):\n%s\n%s", err, out, errOut)
	}
	if d.ExitCode != code {
		t.Errorf("report says exit %d, process exited %d", d.ExitCode, code)
	}
	return code, d
}

func TestDoctorFindsPendingMigrations(t *testing.T) {
	t.Parallel()
	home, _, vars := env(t, "DATABASE_URL="+pgtest.EmptyDSN(t))
	mkdir(t, home)
	code, d := runDoctor(t, vars)
	ok, detail, fix, found := d.check("migrations")
	if code != 1 || !found || ok || !strings.Contains(fix, "buddi db migrate") {
		t.Errorf("exit %d, migrations check %v %q %q; want a problem saying to run buddi db migrate", code, ok, detail, fix)
	}
	if ok, _, _, _ := d.check("database"); !ok {
		t.Errorf("database check failed on a reachable database: %+v", d.Checks)
	}
}

func TestDoctorReportsFailedJobs(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `
		INSERT INTO river.river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, finalized_at, errors)
		VALUES ('{}', 'mail.triage', 8, 'default', 'discarded', 8, now(), now(),
		        ARRAY['{"at":"2026-11-29T00:00:00Z","attempt":8,"error":"connection reset by peer"}'::jsonb])`)
	if err != nil {
		t.Fatal(err)
	}
	home, _, vars := env(t, "DATABASE_URL="+dsn)
	mkdir(t, home)
	code, d := runDoctor(t, vars)
	ok, detail, fix, found := d.check("queue")
	if code != 1 || !found || ok || !strings.Contains(detail, "1 failed") || fix == "" {
		t.Errorf("exit %d, queue check %v %q %q; want the failed job counted with a fix", code, ok, detail, fix)
	}
	if len(d.FailedJobs) != 1 || d.FailedJobs[0].Kind != "mail.triage" || d.FailedJobs[0].LastError != "connection reset by peer" {
		t.Errorf("failed jobs = %+v", d.FailedJobs)
	}
	if ok, _, fix, _ := d.check("listener"); ok || !strings.Contains(fix, "buddi serve") {
		t.Errorf("listener check with nothing serving: ok=%v fix=%q", ok, fix)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

// isolated keeps the vault key to BUDDI_VAULT_KEY: no OS keychain, and a configuration
// directory of the test's own (so no key file of this machine's owner is found).
func isolated(t *testing.T) []string {
	return []string{"BUDDI_KEYCHAIN=off", "XDG_CONFIG_HOME=" + t.TempDir()}
}

// A buddi serving with its vault locked (started without the key) and no model account is
// not healthy: doctor exits 1 and names both, each with what to do.
func TestDoctorNamesALockedVaultAndNoAccount(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t, isolated(t)...)
	s := startServe(t, home, port, vars)
	s.health()
	// The command line has the key; the server does not. Doctor asks the server.
	code, d := runDoctor(t, append(vars, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE="))
	if code != 1 {
		t.Errorf("exit %d, want 1: %+v", code, d.Checks)
	}
	if st, sentence, fix := d.status("vault"); st != "fail" || !strings.Contains(sentence, "locked") || !strings.Contains(fix, "buddi init") {
		t.Errorf("vault check: %s %q %q; want a failure saying it is locked and to run buddi init", st, sentence, fix)
	}
	if st, sentence, fix := d.status("agent @buddi"); st != "fail" || !strings.Contains(sentence, "no model account") || !strings.Contains(fix, "buddi agents set") {
		t.Errorf("the default agent's check: %s %q %q; want a failure saying it has no account and how to give it one", st, sentence, fix)
	}
	for _, c := range d.Checks {
		if c.Status != "ok" && (c.Sentence == "" || c.Fix == "") {
			t.Errorf("check %s is %s without a sentence and a fix: %+v", c.Name, c.Status, c)
		}
	}
	// Without --json the same, readable.
	code, out, _ := runBuddi(t, vars, time.Minute, "doctor")
	if code != 1 || !strings.Contains(out, "FAIL  vault") || !strings.Contains(out, "buddi init") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
}

// A home set up with a working account exits 0; a waiting approval is a warning naming the
// command that decides it (still exit 0), and a failed job is a failure naming `buddi jobs`.
func TestDoctorOnASetUpHome(t *testing.T) {
	model, _, vars, home := scriptedServeWith(t, isolated(t), func(vars []string) {
		if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@buddi", "--account", "scripted", "--model", "model-one"); code != 0 {
			t.Fatalf("agents set: %d %s%s", code, out, errOut)
		}
	})
	code, d := runDoctor(t, vars)
	if code != 0 {
		t.Fatalf("doctor on a set-up home: exit %d: %+v", code, d.Checks)
	}
	for _, name := range []string{"vault", "agent @buddi", "agent @dev", "time zone", "telegram", "tailnet", "approvals", "queue"} {
		if st, sentence, _ := d.status(name); st == "" || st == "fail" {
			t.Errorf("check %s: %q %q", name, st, sentence)
		}
	}

	// A card left waiting.
	dir := t.TempDir()
	model.Script(pt.Tools(pt.ToolCall{ID: "toolu_1", Name: provider.WireToolName("developer.workspace"), Args: `{"directory":"` + dir + `"}`}))
	if _, out, errOut := runWithInput(t, vars, "", "ask", "--agent", "@dev", "work in my project"); !strings.Contains(errOut, "left pending") {
		t.Fatalf("ask: %s%s", out, errOut)
	}
	code, d = runDoctor(t, vars)
	st, sentence, fix := d.status("approvals")
	if code != 0 || st != "warn" || !strings.Contains(sentence, "1 approval") || !strings.Contains(fix, "buddi approvals") {
		t.Errorf("a pending approval: exit %d, %s %q %q; want a warning naming buddi approvals, exit 0", code, st, sentence, fix)
	}

	// A discarded job.
	db := dbConn(t, home)
	if _, err := db.Exec(t.Context(), `INSERT INTO river.river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, finalized_at, errors)
		VALUES ('{}', 'mail.triage', 8, 'default', 'discarded', 8, now(), now(),
		ARRAY['{"at":"2026-11-29T00:00:00Z","attempt":8,"error":"connection reset by peer"}'::jsonb])`); err != nil {
		t.Fatal(err)
	}
	code, d = runDoctor(t, vars)
	st, sentence, fix = d.status("queue")
	if code != 1 || st != "fail" || !strings.Contains(sentence, "1 failed job") || !strings.Contains(fix, "buddi jobs") {
		t.Errorf("a failed job: exit %d, %s %q %q; want a failure naming buddi jobs, exit 1", code, st, sentence, fix)
	}
}

// doctor --fix does the safe repairs and says what it did: a missing data directory is
// created (0700), one others may enter loses their bits. It starts nothing.
func TestDoctorFix(t *testing.T) {
	t.Parallel()
	home, _, vars := env(t, isolated(t)...)
	code, out, _ := runBuddi(t, vars, time.Minute, "doctor", "--fix")
	fi, err := os.Stat(home)
	if err != nil || fi.Mode().Perm() != 0o700 || !strings.Contains(out, "doctor --fix did:") || !strings.Contains(out, "created "+home) {
		t.Fatalf("doctor --fix on a missing home: exit %d, %v\n%s", code, err, out)
	}
	if code != 3 || !strings.Contains(out, "buddi serve") { // the database is still to be set up, by serve
		t.Errorf("doctor --fix: exit %d, want 3 saying to run buddi serve\n%s", code, out)
	}
	if err := os.Chmod(home, 0o705); err != nil {
		t.Fatal(err)
	}
	_, d := runDoctor(t, vars)
	if st, _, fix := d.status("data directory"); st != "fail" || !strings.Contains(fix, "chmod o-rwx") {
		t.Errorf("a home others may enter: %s %q", st, fix)
	}
	if fi, _ := os.Stat(home); fi.Mode().Perm() != 0o705 {
		t.Errorf("doctor without --fix changed the mode to %v", fi.Mode().Perm())
	}
	code, out, _ = runBuddi(t, vars, time.Minute, "doctor", "--fix")
	if fi, _ := os.Stat(home); fi.Mode().Perm() != 0o700 || !strings.Contains(out, "took away what others may do") {
		t.Errorf("doctor --fix on mode 0705: exit %d, mode %v\n%s", code, fi.Mode().Perm(), out)
	}
}
