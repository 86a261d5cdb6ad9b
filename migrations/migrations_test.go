package migrations_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"buddi/db"
	"buddi/internal/pgtest"
	"buddi/migrations"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestUpIsIdempotentAndCheckFollows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := db.Open(ctx, pgtest.EmptyDSN(t), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	before, err := migrations.Check(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || before[0].Schema != "core" || before[1].Schema != migrations.RiverSchema {
		t.Fatalf("Check on an empty database = %+v, want core and river", before)
	}
	for _, st := range before {
		if !st.Pending() || st.Current != 0 || st.Target == 0 {
			t.Errorf("%s before migrating: %+v, want pending from 0", st.Schema, st)
		}
	}

	first, err := migrations.Up(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, a := range first {
		applied += len(a.Versions)
	}
	if applied == 0 {
		t.Fatal("first Up applied nothing")
	}

	second, err := migrations.Up(ctx, pool, nil)
	if err != nil {
		t.Fatalf("second Up: %v", err)
	}
	for _, a := range second {
		if len(a.Versions) != 0 {
			t.Errorf("second Up applied %s %v again", a.Schema, a.Versions)
		}
	}

	after, err := migrations.Check(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range after {
		if st.Pending() || st.Current != before[i].Target {
			t.Errorf("%s after migrating: %+v, want current at %d", st.Schema, st, before[i].Target)
		}
	}
}

// Two buddis starting at once both migrate; the advisory lock keeps them apart.
func TestConcurrentUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := db.Open(ctx, pgtest.EmptyDSN(t), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := migrations.Up(ctx, pool, nil)
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Up: %v", err)
		}
	}
	sts, err := migrations.Check(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if st.Pending() {
			t.Errorf("%s pending after concurrent Up: %+v", st.Schema, st)
		}
	}
}

// Grant gives a role read and write on every migrated table but never the right to change
// or remove a row of a table whose trigger refuses that, nor TRUNCATE, REFERENCES or
// TRIGGER anywhere; running it twice changes nothing.
func TestGrantWithholdsWhatTheTriggersRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := db.Open(ctx, pgtest.EmptyDSN(t), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	role := fmt.Sprintf("t_app_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := pool.Exec(ctx, "CREATE ROLE "+role+" NOLOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(ctx, "DROP OWNED BY "+role)
		_, _ = pool.Exec(ctx, "DROP ROLE "+role)
	})
	if _, err := migrations.Up(ctx, pool, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := migrations.Grant(ctx, pool, role); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := pool.Query(ctx, `
		SELECT c.oid::regclass::text,
		       has_table_privilege($1, c.oid, 'SELECT'), has_table_privilege($1, c.oid, 'INSERT'),
		       has_table_privilege($1, c.oid, 'UPDATE'), has_table_privilege($1, c.oid, 'DELETE'),
		       has_table_privilege($1, c.oid, 'TRUNCATE, REFERENCES, TRIGGER'),
		       EXISTS (SELECT 1 FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid
		               WHERE g.tgrelid = c.oid AND p.proname LIKE '%refuse_change'),
		       c.relname IN ('schema_version', 'river_migration'),
		       c.oid::regclass::text IN ('core.effect_attempts', 'core.approvals', 'core.tool_permissions')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('core', 'river') AND c.relkind IN ('r', 'p')`, role)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tables, refusing := 0, 0
	for rows.Next() {
		var name string
		var sel, ins, upd, del, other, refuses, bookkeeping, kept bool
		if err := rows.Scan(&name, &sel, &ins, &upd, &del, &other, &refuses, &bookkeeping, &kept); err != nil {
			t.Fatal(err)
		}
		tables++
		switch {
		case other:
			t.Errorf("%s: the role may TRUNCATE, REFERENCES or TRIGGER", name)
		case !sel:
			t.Errorf("%s: the role may not read it", name)
		case bookkeeping && (ins || upd || del):
			t.Errorf("%s: the role may write the migrations' bookkeeping", name)
		case refuses && (upd || del):
			refusing++
			t.Errorf("%s: its trigger refuses changes, yet the role may UPDATE (%v) or DELETE (%v)", name, upd, del)
		case refuses:
			refusing++
			if !ins {
				t.Errorf("%s: the role may not append to it", name)
			}
		case kept && del:
			// A deleted ledger row would let an approved action dispatch again.
			t.Errorf("%s: its rows are kept, yet the role may DELETE", name)
		case kept && !(ins && upd):
			t.Errorf("%s: the role may not write it", name)
		case kept:
		case !bookkeeping && !(ins && upd && del):
			t.Errorf("%s: the role may not write it", name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if tables < 10 || refusing != 2 {
		t.Errorf("%d tables, %d with a refusing trigger: want core's and River's, and core.events and core.actions", tables, refusing)
	}
}
