package migrations_test

import (
	"context"
	"testing"

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
