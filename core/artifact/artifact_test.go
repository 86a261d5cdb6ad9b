package artifact

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"buddi/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	return NewStore(pgtest.Pool(t), dir), dir
}

func TestVersionsAreKeptAndReadExactly(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	v1, err := s.Save(ctx, Artifact{Agent: "scribe", Name: "notes.md", MediaType: "text/markdown"}, []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if v1.Version != 1 || v1.Lineage != v1.ID || v1.Previous != "" {
		t.Fatalf("first version %+v", v1)
	}
	v2, err := s.Save(ctx, Artifact{Agent: "scribe", Previous: v1.ID}, []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	v3, err := s.Save(ctx, Artifact{Agent: "scribe", Previous: v2.ID, Name: "notes-final.md"}, []byte("three"))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != 2 || v2.Lineage != v1.ID || v2.Previous != v1.ID || v2.Name != "notes.md" || v2.MediaType != "text/markdown" {
		t.Errorf("second version %+v", v2)
	}
	if v3.Version != 3 || v3.Lineage != v1.ID || v3.Name != "notes-final.md" {
		t.Errorf("third version %+v", v3)
	}
	for want, a := range map[string]Artifact{"one": v1, "two": v2, "three": v3} {
		got, data, err := s.Open(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != want || got.Version != a.Version || got.SHA256 != a.SHA256 {
			t.Errorf("open %s: %q, version %d; want %q, version %d", a.ID, data, got.Version, want, a.Version)
		}
	}
	for _, id := range []string{v1.ID, v2.ID, v3.ID} {
		latest, err := s.Latest(ctx, id)
		if err != nil || latest.ID != v3.ID {
			t.Errorf("latest of %s: %s, %v; want %s", id, latest.ID, err, v3.ID)
		}
	}
	vs, err := s.Versions(ctx, v2.ID)
	if err != nil || len(vs) != 3 || vs[0].ID != v1.ID || vs[2].ID != v3.ID {
		t.Errorf("versions: %+v, %v", vs, err)
	}
	list, err := s.List(ctx, Filter{})
	if err != nil || len(list) != 1 || list[0].ID != v3.ID || list[0].Versions != 3 {
		t.Errorf("list: %+v, %v", list, err)
	}

	// Writing over an older version would lose what came since: refused, naming the latest.
	_, err = s.Save(ctx, Artifact{Agent: "scribe", Previous: v1.ID}, []byte("stale"))
	var nl *NotLatestError
	if !errors.As(err, &nl) || nl.Latest != v3.ID || nl.Version != 3 {
		t.Errorf("a version over version 1: %v", err)
	}
	if _, err := s.Save(ctx, Artifact{Agent: "scribe", Previous: "7b0c3a52-5f7e-4a0e-9d8e-2f3c1b9a0d11"}, []byte("x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a version of nothing: %v", err)
	}
}

func TestAVersionNeverChanges(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	a, err := s.Save(ctx, Artifact{Agent: "scribe", Name: "a.txt", MediaType: "text/plain"}, []byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE core.artifacts SET sha256 = 'x' WHERE id = $1`,
		`UPDATE core.artifacts SET bytes = 1 WHERE id = $1`,
		`UPDATE core.artifacts SET version = 2 WHERE id = $1`,
		`UPDATE core.artifacts SET agent = 'other' WHERE id = $1`,
		`UPDATE core.artifacts SET name = 'other.md' WHERE id = $1`,
		`UPDATE core.artifacts SET conversation_id = gen_random_uuid() WHERE id = $1`,
		`UPDATE core.artifacts SET created_at = now() - interval '1 day' WHERE id = $1`,
		`UPDATE core.artifacts SET source = 'forged' WHERE id = $1`,
	} {
		if _, err := s.pool.Exec(ctx, q, a.ID); err == nil {
			t.Errorf("%s was allowed", q)
		}
	}
	// Bytes changed behind the store's back are not served as the version.
	if err := os.WriteFile(filepath.Join(dir, "artifacts", a.ID), []byte("swapped"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(ctx, a.ID); err == nil {
		t.Error("a file that no longer matches its digest was opened")
	}
}

func TestTwoWritersOfTheNextVersionForkNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	v1, err := s.Save(ctx, Artifact{Agent: "scribe", Name: "a.txt", MediaType: "text/plain"}, []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = s.Save(ctx, Artifact{Agent: "scribe", Previous: v1.ID}, []byte{byte('a' + i)})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var nl *NotLatestError
		switch {
		case err == nil:
			won++
		case !errors.As(err, &nl):
			t.Errorf("a losing writer: %v", err)
		}
	}
	vs, err := s.Versions(ctx, v1.ID)
	if won != 1 || err != nil || len(vs) != 2 {
		t.Errorf("%d writers won, %d versions (%v); want 1 and 2", won, len(vs), err)
	}
}

func TestListFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	conv := "0b9e3c1a-2d4f-4e6a-8b7c-9d0e1f2a3b4c"
	mine, _ := s.Save(ctx, Artifact{Agent: "scribe", Name: "Report.md", MediaType: "text/markdown"}, []byte("r"))
	shared, _ := s.Save(ctx, Artifact{Agent: "coder", ConversationID: conv, Name: "diagram.png", MediaType: "image/png"}, []byte("d"))
	private, _ := s.Save(ctx, Artifact{Agent: "coder", Name: "secret.txt", MediaType: "text/plain"}, []byte("s"))
	ids := func(f Filter) map[string]bool {
		list, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, a := range list {
			out[a.ID] = true
		}
		return out
	}
	if got := ids(Filter{Agent: "scribe", ConversationID: conv}); len(got) != 2 || !got[mine.ID] || !got[shared.ID] || got[private.ID] {
		t.Errorf("scribe in the conversation sees %v", got)
	}
	if got := ids(Filter{Agent: "scribe"}); len(got) != 1 || !got[mine.ID] {
		t.Errorf("scribe alone sees %v", got)
	}
	if got := ids(Filter{}); len(got) != 3 {
		t.Errorf("the owner sees %v", got)
	}
	if got := ids(Filter{Name: "report"}); len(got) != 1 || !got[mine.ID] {
		t.Errorf("by name: %v", got)
	}
	if got := ids(Filter{Agent: "scribe", ConversationID: "not-a-uuid"}); len(got) != 1 {
		t.Errorf("a malformed conversation: %v", got)
	}
}

// A caller that shows MaxList asks for one more to know there are more: List gives it, and
// never more than that.
func TestListGivesOneMoreThanItShows(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	for i := 0; i < MaxList+2; i++ {
		if _, err := s.Save(ctx, Artifact{Agent: "scribe", Name: fmt.Sprintf("n%03d.txt", i), MediaType: "text/plain"}, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for limit, want := range map[int]int{0: MaxList, MaxList + 1: MaxList + 1, 10_000: MaxList + 1, 5: 5} {
		list, err := s.List(ctx, Filter{Agent: "scribe", Limit: limit})
		if err != nil || len(list) != want {
			t.Errorf("limit %d: %d files (%v), want %d", limit, len(list), err, want)
		}
	}
}
