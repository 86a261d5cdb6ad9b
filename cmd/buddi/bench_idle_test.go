package main

import (
	"bytes"
	"strings"
	"testing"
)

// A statement log as the server writes it with logStatements's prefix: statements outside a
// block, a block (counted once, under its first statement), a statement whose text begins on
// the next line, parameters, and the bench's own connection (left out).
const sampleStatementLog = `2026-12-02 00:30:46.755 UTC [15620] app=buddi-bench: LOG:  statement: SELECT xact_commit FROM pg_stat_database
2026-12-02 00:30:46.813 UTC [13056] app=buddi-queue: LOG:  execute stmtcache_3ce4: -- name: JobGetAvailable :many
	WITH locked_jobs AS (
	    SELECT id
2026-12-02 00:30:46.813 UTC [13056] app=buddi-queue: DETAIL:  parameters: $1 = NULL, $2 = '100'
2026-12-02 00:30:46.837 UTC [13055] app=buddi-queue: LOG:  statement: -- ping
2026-12-02 00:30:46.900 UTC [13056] app=buddi-queue: LOG:  execute stmtcache_3ce4: -- name: JobGetAvailable :many
	WITH locked_jobs AS (
2026-12-02 00:30:47.000 UTC [13057] app=buddi: LOG:  statement: begin
2026-12-02 00:30:47.001 UTC [13057] app=buddi: LOG:  execute stmtcache_aa: SELECT value FROM core.system_flags WHERE key = $1 FOR UPDATE
2026-12-02 00:30:47.002 UTC [13057] app=buddi: LOG:  execute stmtcache_bb: SELECT j.id FROM river.river_job j
2026-12-02 00:30:47.003 UTC [13057] app=buddi: LOG:  statement: commit
2026-12-02 00:30:50.765 UTC [13094] app=buddi: LOG:  execute stmtcache_42: 
			SELECT id, agent, name FROM developer.processes WHERE stopped_at IS NULL
			ORDER BY agent, name
2026-12-02 00:30:50.765 UTC [13094] app=buddi: DETAIL:  parameters: $1 = '', $2 = ''
`

func TestTransactionsBySource(t *testing.T) {
	got := transactionsBySource([]byte(sampleStatementLog), 2)
	want := []sourceCount{
		{App: "buddi-queue", Statement: "-- name: JobGetAvailable :many", PerSecond: 1},
		{App: "buddi", Statement: "SELECT id, agent, name FROM developer.processes WHERE stopped_at IS NULL", PerSecond: 0.5},
		{App: "buddi", Statement: "SELECT value FROM core.system_flags WHERE key = $1 FOR UPDATE (in a transaction)", PerSecond: 0.5},
		{App: "buddi-queue", Statement: "-- ping", PerSecond: 0.5},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sources, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("source %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// However the log reads, the count is of its statements at most and nothing panics.
func FuzzTransactionsBySource(f *testing.F) {
	f.Add([]byte(sampleStatementLog))
	f.Add([]byte("x [1] app=a: LOG:  execute s: \n"))
	f.Add([]byte("x [1] app=a: LOG:  statement: begin\nx [1] app=a: LOG:  statement: select 1\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		total := 0.0
		for _, sc := range transactionsBySource(raw, 1) {
			if sc.PerSecond <= 0 || sc.App == "buddi-bench" {
				t.Fatalf("bad source %+v", sc)
			}
			total += sc.PerSecond
		}
		if lines := bytes.Count(raw, []byte("\n")) + 1; total > float64(lines) || total > float64(strings.Count(string(raw), "LOG:  ")) {
			t.Fatalf("%v transactions from %d lines", total, lines)
		}
	})
}
