package eventlog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"buddi/internal/pgtest"
)

// A run's events are found through an index on its run id, whatever the log's length: the
// lookups by run (a run's pinned start, a call's recorded result, the intent before a call,
// the conversation of a call) must not walk every event of their kind, as the log only grows.
// Each shape is planned as a prepared statement is after its fifth execution (the generic
// plan), which is how the driver's statement cache runs them.
func TestRunEventsAreFoundByIndex(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `INSERT INTO core.events (kind, payload)
		SELECT k, jsonb_build_object('run_id', gen_random_uuid()::text, 'call_id', 'call_' || i)
		FROM generate_series(1, 4000) i, unnest(ARRAY['run.started', 'tool.result', 'tool.called', 'run.tool_intent']) k`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE core.events`); err != nil {
		t.Fatal(err)
	}
	shapes := map[string]string{
		"a run's pinned start": `SELECT payload FROM core.events WHERE payload->>'run_id' = $1 AND kind = $2 ORDER BY id LIMIT 1`,
		"a call's result":      `SELECT EXISTS (SELECT 1 FROM core.events WHERE kind = $2 AND payload->>'run_id' = $1 AND payload->>'call_id' = $3)`,
		"a call's latest":      `SELECT conversation_id FROM core.events WHERE kind = $2 AND payload->>'run_id' = $1 AND payload->>'call_id' = $3 ORDER BY id DESC LIMIT 1`,
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	i := 0
	for what, sql := range shapes {
		i++
		name := fmt.Sprintf("shape_%d", i)
		params := "text, text"
		args := "'nobody', 'run.started'"
		if strings.Contains(sql, "$3") {
			params, args = "text, text, text", "'nobody', 'tool.result', 'call_1'"
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf(`PREPARE %s (%s) AS %s`, name, params, sql)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var raw []byte
		if err := conn.QueryRow(ctx, fmt.Sprintf(`EXPLAIN (FORMAT JSON) EXECUTE %s (%s)`, name, args)).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var plan []struct{ Plan map[string]any }
		if err := json.Unmarshal(raw, &plan); err != nil || len(plan) != 1 {
			t.Fatalf("%s: the plan is %s (%v)", what, raw, err)
		}
		if idx := indexes(plan[0].Plan); !strings.Contains(idx, "events_run_kind_idx") {
			t.Errorf("%s is not found by run id: its plan reads %q\n%s", what, idx, raw)
		}
	}
}

// indexes lists the index names and scan types of a plan's nodes.
func indexes(node map[string]any) string {
	out := fmt.Sprint(node["Node Type"], ":", node["Index Name"], " ")
	if kids, ok := node["Plans"].([]any); ok {
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				out += indexes(m)
			}
		}
	}
	return out
}
