package eventlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestAppendJoinsCallersTransaction(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.Append(ctx, tx, "test.rolled_back", "", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	tx, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conv := "6f1c2a8e-3f41-4d5b-9a9e-0b7f3c2d1e00"
	want, err := eventlog.Append(ctx, tx, "test.committed", conv, map[string]int{"n": 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	got, err := eventlog.List(ctx, pool, eventlog.Filter{Kind: "test."})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != want.ID || got[0].Kind != "test.committed" || got[0].ConversationID != conv {
		t.Fatalf("got %+v, want only the committed event %+v", got, want)
	}
	var payload map[string]int
	if err := json.Unmarshal(got[0].Payload, &payload); err != nil || payload["n"] != 2 {
		t.Errorf("payload = %s, want {\"n\":2}", got[0].Payload)
	}
}

func TestDatabaseRefusesChange(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	ev, err := eventlog.Append(ctx, pool, "test.fact", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"UPDATE core.events SET kind = 'test.changed' WHERE id = $1",
		"DELETE FROM core.events WHERE id = $1",
		"TRUNCATE core.events",
	} {
		args := []any{ev.ID}
		if strings.HasPrefix(sql, "TRUNCATE") {
			args = nil
		}
		_, err := pool.Exec(ctx, sql, args...)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || !strings.Contains(pgErr.Message, "append-only") {
			t.Errorf("%s: err = %v, want the append-only refusal", sql, err)
		}
	}
	got, err := eventlog.List(ctx, pool, eventlog.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != "test.fact" {
		t.Errorf("after refused changes the log holds %+v", got)
	}
}

func TestAppendRefusesBadKind(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	for _, kind := range []events.Kind{"", "nodot", "Upper.case", "trailing."} {
		if _, err := eventlog.Append(context.Background(), pool, kind, "", nil); err == nil {
			t.Errorf("kind %q was accepted", kind)
		}
	}
}

func TestListOrderAndFilters(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	var ids []int64
	for _, k := range []events.Kind{"a.one", "b.two", "a.three"} {
		ev, err := eventlog.Append(ctx, pool, k, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	tests := []struct {
		name string
		f    eventlog.Filter
		want []string
	}{
		{"all", eventlog.Filter{}, []string{"a.one", "b.two", "a.three"}},
		{"prefix", eventlog.Filter{Kind: "a."}, []string{"a.one", "a.three"}},
		{"exact", eventlog.Filter{Kind: "b.two"}, []string{"b.two"}},
		{"after", eventlog.Filter{AfterID: ids[0]}, []string{"b.two", "a.three"}},
		{"limit", eventlog.Filter{Limit: 1}, []string{"a.one"}},
		{"newest", eventlog.Filter{Newest: true, Limit: 2}, []string{"a.three", "b.two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := eventlog.List(ctx, pool, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, e := range got {
				kinds = append(kinds, string(e.Kind))
			}
			if strings.Join(kinds, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", kinds, tt.want)
			}
		})
	}
}

func TestRecorderWritesInBackground(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	r := eventlog.NewRecorder(pool, slog.New(slog.DiscardHandler))
	for i := range 5 {
		r.Record("test.recorded", "", map[string]int{"i": i})
	}
	r.Close()
	got, err := eventlog.List(context.Background(), pool, eventlog.Filter{Kind: "test.recorded"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("recorded %d events, want 5", len(got))
	}
	for i, e := range got {
		var p map[string]int
		_ = json.Unmarshal(e.Payload, &p)
		if p["i"] != i {
			t.Errorf("event %d payload %s: order lost", i, e.Payload)
		}
	}
}
