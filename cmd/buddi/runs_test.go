package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/dbsource"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

func dbConn(t *testing.T, home string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, appDSN(t, home))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// appDSN connects to the embedded cluster in home as the CLI does: the application role, its
// password read from its file.
func appDSN(t *testing.T, home string) string {
	t.Helper()
	dsn, err := dbsource.AppDSN(home)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

func postMessage(t *testing.T, s *served, body map[string]any) (conv, runID string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := s.request("POST", "/api/messages", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Conversation struct{ ID string } `json:"conversation"`
		RunID        string              `json:"run_id"`
	}
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /api/messages: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Conversation.ID, out.RunID
}

// buddi is killed (-9) in the middle of a run, after an effect succeeded: started again, it
// carries the run on at once, the run finishes, and the effect was dispatched exactly once.
func TestKilledMidRunCarriesOnWithoutRepeatingTheEffect(t *testing.T) {
	model, s, vars, home := scriptedServeAt(t)
	ws := t.TempDir()
	if code, out, errOut := runBuddi(t, vars, time.Minute, "developer", "workspace", "set", ws); code != 0 {
		t.Fatalf("workspace set: %d %s%s", code, out, errOut)
	}
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_w", Name: provider.WireToolName("developer.write"), Args: `{"path":"notes.txt","content":"one\n"}`}),
		pt.Reply{Stall: true},
	)
	conv, runID := postMessage(t, s, map[string]any{"agent": "@dev", "text": "write the note", "surface": "terminal"})
	waitFor(t, "the write and the stalled step", time.Minute, func() bool { return len(model.Requests()) == 2 })
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "one\n" {
		t.Fatalf("the effect: %q %v", b, err)
	}
	_ = s.cmd.Process.Kill()
	<-s.exited

	model.Script(pt.Text("The note is written."))
	s2 := startServe(t, home, s.port, vars)
	s2.health()
	conn := dbConn(t, home)
	ctx := context.Background()
	waitFor(t, "the run to finish after the restart", 2*time.Minute, func() bool {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'run.finished' AND payload->>'run_id' = $1`, runID).Scan(&n)
		return err == nil && n == 1
	})
	var recovered int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM core.events WHERE kind = 'run.recovered' AND payload->>'run_id' = $1`, runID).Scan(&recovered); err != nil || recovered != 1 {
		t.Fatalf("run.recovered events: %d, %v; want 1 (the start carried the run on)", recovered, err)
	}
	var attempts int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM core.effect_attempts WHERE run_id = $1 AND call_id = 'toolu_w'`, runID).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != 1 {
		t.Fatalf("the write was dispatched %d times, want 1", attempts)
	}
	var last string
	if err := conn.QueryRow(ctx, `SELECT body::text FROM core.messages WHERE conversation_id = $1 ORDER BY id DESC LIMIT 1`, conv).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(last, "The note is written.") {
		t.Fatalf("the last entry: %s", last)
	}
	if code := s2.stop(); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
}

// A process the agent started (developer.start, approved in place) stops with buddi: SIGTERM
// leaves no child behind.
func TestStartedProcessStopsWithBuddi(t *testing.T) {
	model, s, vars, home := scriptedServeAt(t)
	ws := t.TempDir()
	if code, out, errOut := runBuddi(t, vars, time.Minute, "developer", "workspace", "set", ws); code != 0 {
		t.Fatalf("workspace set: %d %s%s", code, out, errOut)
	}
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_s", Name: provider.WireToolName("developer.start"), Args: `{"name":"web","command":"sleep 300"}`}),
		pt.Text("It runs."),
	)
	if code, out, errOut := runWithInput(t, vars, "a\n", "ask", "--agent", "@dev", "start the server"); code != 0 || !strings.Contains(out, "It runs.") {
		t.Fatalf("ask: %d\n%s\n%s", code, out, errOut)
	}
	var pid int
	if err := dbConn(t, home).QueryRow(context.Background(), `SELECT pid FROM developer.processes WHERE name = 'web'`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if !processAlive(pid) {
		t.Fatal("the started process is not running")
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	if processAlive(pid) {
		t.Fatalf("process %d outlived buddi", pid)
	}
}

// The processes of an agent whose file is removed are stopped.
func TestRemovedAgentsProcessesStop(t *testing.T) {
	model, _, vars, home := scriptedServeAt(t)
	agentFile := filepath.Join(home, "agents", "helper.md")
	if err := os.MkdirAll(filepath.Dir(agentFile), 0o700); err != nil {
		t.Fatal(err)
	}
	body := "---\nid: helper\nhandle: \"@helper\"\nname: Helper\ntools: [developer.start, developer.stop]\n---\nYou help.\n"
	if err := os.WriteFile(agentFile, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for _, args := range [][]string{
		{"developer", "workspace", "set", "--agent", "helper", ws},
		{"agents", "set", "@helper", "--account", "scripted", "--model", "model-one"},
	} {
		if code, out, errOut := runBuddi(t, vars, time.Minute, args...); code != 0 {
			t.Fatalf("%v: %d %s%s", args, code, out, errOut)
		}
	}
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_s", Name: provider.WireToolName("developer.start"), Args: `{"name":"watch","command":"sleep 300"}`}),
		pt.Text("Watching."),
	)
	if code, out, errOut := runWithInput(t, vars, "a\n", "ask", "--agent", "@helper", "watch"); code != 0 {
		t.Fatalf("ask: %d\n%s\n%s", code, out, errOut)
	}
	var pid int
	conn := dbConn(t, home)
	if err := conn.QueryRow(context.Background(), `SELECT pid FROM developer.processes WHERE agent = 'helper' AND name = 'watch'`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if !processAlive(pid) {
		t.Fatal("the process is not running")
	}
	if err := os.Remove(agentFile); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed agent's process to stop", time.Minute, func() bool { return !processAlive(pid) })
	waitFor(t, "the developer.process_stopped event", time.Minute, func() bool {
		var n int
		err := conn.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'developer.process_stopped' AND payload->>'agent' = 'helper'`).Scan(&n)
		return err == nil && n == 1
	})
}

// A mission of the owner's, run now: its occurrence starts an unattended run of the agent in
// a conversation of its own, which the scripted model answers.
func TestMissionRunNow(t *testing.T) {
	model, _, vars, home := scriptedServeAt(t)
	if code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "@dev", "--cron", "0 9 * * 1-5",
		"--tz", "Europe/Berlin", "--prompt", "Summarise the workspace."); code != 0 || !strings.Contains(out, "mission 1 added") || !strings.Contains(out, "Europe/Berlin") {
		t.Fatalf("missions add: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "role:recap", "--cron", "0 9 * * 1", "--prompt", "Recap."); code != 0 || !strings.Contains(out, "Mondays at 09:00") {
		t.Fatalf("a mission for a role: %d %s%s", code, out, errOut)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "role:nobody", "--cron", "0 9 * * 1", "--prompt", "x"); code != 1 || !strings.Contains(errOut, "roles: [nobody]") {
		t.Fatalf("a role nobody holds: %d %s", code, errOut)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "missions", "add", "--agent", "@dev", "--cron", "0 25 * * *", "--prompt", "x"); code != 2 {
		t.Fatalf("a bad cron: %d %s", code, errOut)
	}
	model.Script(pt.Text("Nothing new in the workspace."))
	if code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "run-now", "1"); code != 0 {
		t.Fatalf("run-now: %d %s%s", code, out, errOut)
	}
	conn := dbConn(t, home)
	var runID string
	waitFor(t, "the mission's run to finish", time.Minute, func() bool {
		err := conn.QueryRow(context.Background(), `SELECT o.run_id FROM core.occurrences o JOIN core.events e
			ON e.kind = 'run.finished' AND e.payload->>'run_id' = o.run_id WHERE o.mission_id = 1`).Scan(&runID)
		return err == nil && runID != ""
	})
	var surface string
	var interactive bool
	if err := conn.QueryRow(context.Background(), `SELECT c.surface, (e.payload->>'interactive')::boolean FROM core.events e
		JOIN core.conversations c ON c.id = e.conversation_id WHERE e.kind = 'run.started' AND e.payload->>'run_id' = $1`, runID).Scan(&surface, &interactive); err != nil {
		t.Fatal(err)
	}
	if surface != "mission" || interactive {
		t.Fatalf("the mission's run: surface %q, interactive %v", surface, interactive)
	}
	// It called neither mission.report nor mission.silent: silent, no-decision.
	code, out, _ := runBuddi(t, vars, time.Minute, "missions", "occurrences", "1", "--json")
	if code != 0 || !strings.Contains(out, runID) || !strings.Contains(out, `"state": "silent"`) || !strings.Contains(out, "no-decision") {
		t.Fatalf("occurrences: %d %s", code, out)
	}
	// A run that reports is delivered, with its report in the event log.
	model.Script(pt.Tools(pt.ToolCall{ID: "toolu_r", Name: provider.WireToolName("mission.report"), Args: `{"report":"Two tests fail since this morning."}`}),
		pt.Text("Reported."))
	if code, out, errOut := runBuddi(t, vars, time.Minute, "missions", "run-now", "1"); code != 0 {
		t.Fatalf("run-now: %d %s%s", code, out, errOut)
	}
	waitFor(t, "the report", time.Minute, func() bool {
		var n int
		err := conn.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'mission.reported' AND payload->>'report' = 'Two tests fail since this morning.'`).Scan(&n)
		return err == nil && n == 1
	})
	code, out, _ = runBuddi(t, vars, time.Minute, "missions", "occurrences", "1")
	if code != 0 || !strings.Contains(out, "delivered") || !strings.Contains(out, "silent") {
		t.Fatalf("occurrences: %d %s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "missions", "disable", "1"); code != 0 || !strings.Contains(out, "is off") {
		t.Fatalf("disable: %d %s", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "missions", "enable", "9"); code != 1 || !strings.Contains(errOut, "buddi missions") {
		t.Fatalf("enable an unknown mission: %d %s", code, errOut)
	}
}

// buddi pause stops every queue (and says so in doctor) until buddi resume.
func TestPauseAndResume(t *testing.T) {
	model, _, vars, home := scriptedServeAt(t)
	if code, out, errOut := runBuddi(t, vars, time.Minute, "pause"); code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("pause: %d %s%s", code, out, errOut)
	}
	conn := dbConn(t, home)
	var running int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM river.river_queue WHERE paused_at IS NULL`).Scan(&running); err != nil || running != 0 {
		t.Fatalf("queues still running after pause: %d %v", running, err)
	}
	if _, out, _ := runBuddi(t, vars, time.Minute, "doctor"); !strings.Contains(out, "paused by you") {
		t.Fatalf("doctor does not say work is paused:\n%s", out)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "resume"); code != 0 || !strings.Contains(out, "resumed") {
		t.Fatalf("resume: %d %s%s", code, out, errOut)
	}
	model.Script(pt.Text("Back to work."))
	if code, out, errOut := runBuddi(t, vars, time.Minute, "ask", "--agent", "@dev", "hello"); code != 0 || !strings.Contains(out, "Back to work.") {
		t.Fatalf("ask after resume: %d %s%s", code, out, errOut)
	}
	if _, out, _ := runBuddi(t, vars, time.Minute, "doctor"); strings.Contains(out, "paused by you") {
		t.Fatalf("doctor still says paused:\n%s", out)
	}
}

// buddi sentinels: the developer plugin's watcher is listed, ticks at start, and can be
// switched off; findings can be muted.
func TestSentinelsCommands(t *testing.T) {
	_, _, vars, home := scriptedServeAt(t)
	conn := dbConn(t, home)
	waitFor(t, "the first tick", time.Minute, func() bool {
		var n int
		err := conn.QueryRow(context.Background(), `SELECT count(*) FROM core.sentinel_runs WHERE sentinel = 'developer.failing-tests'`).Scan(&n)
		return err == nil && n >= 1
	})
	code, out, errOut := runBuddi(t, vars, time.Minute, "sentinels", "--json")
	if code != 0 || !strings.Contains(out, `"id": "developer.failing-tests"`) || !strings.Contains(out, `"last_run"`) {
		t.Fatalf("sentinels: %d %s%s", code, out, errOut)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "sentinels", "off", "developer.failing-tests"); code != 0 || !strings.Contains(out, "is off") {
		t.Fatalf("off: %d %s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "sentinels"); code != 0 || !strings.Contains(out, "off") {
		t.Fatalf("list after off: %d %s", code, out)
	}
	if code, _, errOut := runBuddi(t, vars, time.Minute, "sentinels", "off", "nope"); code != 1 || !strings.Contains(errOut, "buddi sentinels") {
		t.Fatalf("an unknown sentinel: %d %s", code, errOut)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "sentinels", "mute", "failing-tests"); code != 0 || !strings.Contains(out, "muted") {
		t.Fatalf("mute: %d %s", code, out)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "sentinels", "findings"); code != 0 || !strings.Contains(out, "Nothing open.") {
		t.Fatalf("findings: %d %s", code, out)
	}
}
