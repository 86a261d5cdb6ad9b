package sentinels_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/sentinels"
)

// What the Sentinels and alerts page reads besides the statuses: one open finding (none once
// it resolves), and the mutes, which Unmute takes back so the kind speaks again.
func TestPageReads(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	w := &woken{}
	e := &sentinels.Engine{Pool: pool, Wake: w.wake}
	current := []plugins.Finding{{Key: "disk", Severity: "urgent", OwnerLine: "The disk is full.", Kind: "disk", Subject: "/"}}
	s := plugins.Sentinel{ID: "test.page", Period: time.Minute, Check: func(context.Context) ([]plugins.Finding, error) { return current, nil }}
	if _, err := e.Tick(ctx, s); err != nil {
		t.Fatal(err)
	}
	w.take()

	f, err := e.Open(ctx, "test.page", "disk")
	if err != nil || f.OwnerLine != "The disk is full." || f.Kind != "disk" || f.Subject != "/" {
		t.Fatalf("Open: %+v, %v", f, err)
	}
	if _, err := e.Open(ctx, "test.page", "absent"); !errors.Is(err, sentinels.ErrNoFinding) {
		t.Fatalf("Open of an absent key: %v", err)
	}

	if ms, err := e.Mutes(ctx); err != nil || len(ms) != 0 {
		t.Fatalf("mutes before muting: %v, %v", ms, err)
	}
	if err := e.Mute(ctx, "disk", "/"); err != nil {
		t.Fatal(err)
	}
	if err := e.Mute(ctx, "disk", "/"); err != nil {
		t.Fatal(err)
	}
	ms, err := e.Mutes(ctx)
	if err != nil || len(ms) != 1 || ms[0].Kind != "disk" || ms[0].Subject != "/" || ms[0].ID == 0 || ms[0].Created.IsZero() {
		t.Fatalf("mutes after muting twice: %+v, %v", ms, err)
	}
	if err := e.Unmute(ctx, ms[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Unmute(ctx, ms[0].ID); !errors.Is(err, sentinels.ErrNoFinding) {
		t.Fatalf("unmuting twice: %v", err)
	}
	// Unmuted, resolved and back: it speaks again.
	current = nil
	if _, err := e.Tick(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, "test.page", "disk"); !errors.Is(err, sentinels.ErrNoFinding) {
		t.Fatalf("Open of a resolved finding: %v", err)
	}
	current = []plugins.Finding{{Key: "disk", Severity: "urgent", OwnerLine: "The disk is full.", Kind: "disk", Subject: "/"}}
	if _, err := e.Tick(ctx, s); err != nil {
		t.Fatal(err)
	}
	if k := w.take(); len(k) != 1 {
		t.Fatalf("after Unmute, the finding stayed quiet: %v", k)
	}
}
