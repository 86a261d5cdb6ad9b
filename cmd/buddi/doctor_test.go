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
)

type doctorJSON struct {
	Healthy  bool `json:"healthy"`
	ExitCode int  `json:"exit_code"`
	Checks   []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
		Fix    string `json:"fix"`
	} `json:"checks"`
	FailedJobs []struct {
		Kind      string `json:"kind"`
		LastError string `json:"last_error"`
	} `json:"failed_jobs"`
}

func (d doctorJSON) check(name string) (ok bool, detail, fix string, found bool) {
	for _, c := range d.Checks {
		if c.Name == name {
			return c.OK, c.Detail, c.Fix, true
		}
	}
	return false, "", "", false
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
