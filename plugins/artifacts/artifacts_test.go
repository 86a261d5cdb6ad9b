package artifacts

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/artifact"
	"buddi/core/registry"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	convA = "0b9e3c1a-2d4f-4e6a-8b7c-9d0e1f2a3b4c"
	convB = "5d1f0c2e-7a3b-4c9d-8e6f-1a2b3c4d5e6f"
)

// bundle is the plugin over a real database and store, in a registry.
type bundle struct {
	pool  *pgxpool.Pool
	dir   string
	store *artifact.Store
	reg   *registry.Registry
}

func newBundle(t *testing.T) *bundle {
	t.Helper()
	pool := pgtest.Pool(t)
	dir := t.TempDir()
	store := artifact.NewStore(pool, dir)
	reg, err := registry.New(Manifest(Deps{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{pool: pool, dir: dir, store: store, reg: reg}
}

// call runs tool as agent in conversation conv through the registry (schema, timeout).
func (b *bundle) call(t *testing.T, agent, conv, tool string, args map[string]any) plugins.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	return b.reg.Execute(context.Background(), plugins.Call{Tool: Name + "." + tool, Agent: agent, ConversationID: conv, RunID: "run-1", Args: raw}, nil)
}

// ok runs the call and decodes a successful result's data into v.
func (b *bundle) ok(t *testing.T, agent, conv, tool string, args map[string]any, v any) plugins.Result {
	t.Helper()
	res := b.call(t, agent, conv, tool, args)
	if res.IsError {
		t.Fatalf("%s: %s", tool, res.Text)
	}
	if v != nil {
		if err := json.Unmarshal(res.Data, v); err != nil {
			t.Fatalf("%s: data %s: %v", tool, res.Data, err)
		}
	}
	return res
}

// refused runs the call and checks it failed with one sentence containing want.
func (b *bundle) refused(t *testing.T, agent, conv, tool string, args map[string]any, want string) {
	t.Helper()
	res := b.call(t, agent, conv, tool, args)
	if !res.IsError || !strings.Contains(res.Text, want) {
		t.Errorf("%s %v as %s: %q, want a refusal with %q", tool, args, agent, res.Text, want)
	}
	if strings.Count(strings.TrimSuffix(res.Text, "."), ". ") > 0 || strings.Contains(res.Text, "\n") {
		t.Errorf("%s: the refusal is not one sentence: %q", tool, res.Text)
	}
}

func TestWriteNewVersionsAndReadEachExactly(t *testing.T) {
	b := newBundle(t)
	var v1, v2, v3 Written
	b.ok(t, "scribe", convA, "write", map[string]any{"name": "plan.md", "media_type": "text/markdown", "content": "# Plan\nfirst"}, &v1)
	b.ok(t, "scribe", convB, "write", map[string]any{"previous": v1.Artifact, "content": "# Plan\nsecond"}, &v2)
	b.ok(t, "scribe", convB, "write", map[string]any{"previous": v2.Artifact, "content": "# Plan\nthird", "name": "plan-final.md"}, &v3)
	if v1.Version != 1 || v2.Version != 2 || v3.Version != 3 || v2.Lineage != v1.Artifact || v3.Previous != v2.Artifact {
		t.Fatalf("versions: %+v %+v %+v", v1, v2, v3)
	}
	if v2.Name != "plan.md" || v2.MediaType != "text/markdown" || v3.Name != "plan-final.md" {
		t.Errorf("a version's name and type: %+v %+v", v2, v3)
	}
	for want, id := range map[string]string{"# Plan\nfirst": v1.Artifact, "# Plan\nsecond": v2.Artifact, "# Plan\nthird": v3.Artifact} {
		var r Reading
		b.ok(t, "scribe", "", "read", map[string]any{"id": id}, &r)
		if r.Text != want || r.ID != id || r.Binary || r.Truncated {
			t.Errorf("read %s: %+v, want %q", id, r, want)
		}
		if wantLatest := v3.Artifact; (id != wantLatest) != (r.Latest == wantLatest) {
			t.Errorf("read %s names the latest as %q", id, r.Latest)
		}
	}

	// The list shows each artifact once, at its latest version, with its number of versions.
	var l Listing
	b.ok(t, "scribe", "", "list", map[string]any{}, &l)
	if len(l.Artifacts) != 1 || l.Artifacts[0].ID != v3.Artifact || l.Artifacts[0].Versions != 3 || l.Artifacts[0].Version != 3 {
		t.Errorf("list: %+v", l)
	}
	b.ok(t, "scribe", "", "list", map[string]any{"versions_of": v1.Artifact}, &l)
	if len(l.Artifacts) != 3 || l.Artifacts[0].ID != v1.Artifact || l.Artifacts[2].ID != v3.Artifact {
		t.Errorf("versions_of: %+v", l)
	}
	b.ok(t, "scribe", "", "list", map[string]any{"name": "nothing-like-it"}, &l)
	if len(l.Artifacts) != 0 {
		t.Errorf("a name that matches nothing: %+v", l)
	}

	// A writer that read an older version is told which is the latest; nothing is written.
	b.refused(t, "scribe", "", "write", map[string]any{"previous": v1.Artifact, "content": "lost update"}, v3.Artifact)
	if vs, _ := b.store.Versions(context.Background(), v1.Artifact); len(vs) != 3 {
		t.Errorf("%d versions after a refused write", len(vs))
	}
}

func TestAnotherAgentCannotReadAPrivateArtifact(t *testing.T) {
	b := newBundle(t)
	var private, shared Written
	b.ok(t, "scribe", convA, "write", map[string]any{"name": "diary.txt", "content": "private thoughts"}, &private)
	b.ok(t, "scribe", convB, "write", map[string]any{"name": "handoff.txt", "content": "for the team"}, &shared)
	const missing = "7b0c3a52-5f7e-4a0e-9d8e-2f3c1b9a0d11"

	// coder, in another conversation, can neither read, attach, list nor build on it; the
	// sentence is the same as for an id that does not exist.
	for _, id := range []string{private.Artifact, missing, "not-an-id"} {
		b.refused(t, "coder", convB, "read", map[string]any{"id": id}, "There is no artifact "+id+" you may read")
		b.refused(t, "coder", convB, "attach", map[string]any{"id": id}, "There is no artifact "+id+" you may read")
		b.refused(t, "coder", convB, "list", map[string]any{"versions_of": id}, "There is no artifact "+id+" you may read")
		b.refused(t, "coder", convB, "write", map[string]any{"previous": id, "content": "x"}, "There is no artifact "+id+" you may read")
	}
	b.refused(t, "coder", "", "read", map[string]any{"id": shared.Artifact}, "There is no artifact")
	var l Listing
	b.ok(t, "coder", convB, "list", map[string]any{}, &l)
	if len(l.Artifacts) != 1 || l.Artifacts[0].ID != shared.Artifact {
		t.Errorf("coder in conversation B lists %+v; want only the file made there", l.Artifacts)
	}

	// A call that names neither an agent nor a conversation sees nothing (not the owner's list).
	b.ok(t, "", "", "list", map[string]any{}, &l)
	if len(l.Artifacts) != 0 {
		t.Errorf("a call with no agent lists %+v", l.Artifacts)
	}

	// In the conversation it was made in, a colleague reads it, but writes no version of it.
	var r Reading
	b.ok(t, "coder", convB, "read", map[string]any{"id": shared.Artifact}, &r)
	if r.Text != "for the team" {
		t.Errorf("coder read %q", r.Text)
	}
	b.refused(t, "coder", convB, "write", map[string]any{"previous": shared.Artifact, "content": "mine now"}, "only the agent that made an artifact writes its versions")
	// Its maker reads it anywhere.
	b.ok(t, "scribe", "", "read", map[string]any{"id": private.Artifact}, &r)
}

func TestReadIsBoundedInBytesAndBinaryIsDescribed(t *testing.T) {
	b := newBundle(t)
	ctx := context.Background()
	text := strings.Repeat("aé€😀", 5000) // 1, 2, 3 and 4 bytes: every cut would split one
	var w Written
	b.ok(t, "scribe", "", "write", map[string]any{"name": "long.txt", "content": text}, &w)
	var got strings.Builder
	offset, reads := 0, 0
	for {
		var r Reading
		b.ok(t, "scribe", "", "read", map[string]any{"id": w.Artifact, "offset": offset, "max_bytes": 1001}, &r)
		if len(r.Text) > 1001 || !json.Valid([]byte(`"`+r.Text+`"`)) {
			t.Fatalf("a read of %d bytes", len(r.Text))
		}
		got.WriteString(r.Text)
		reads++
		if !r.Truncated {
			break
		}
		offset = r.NextOffset
	}
	if got.String() != text || reads < 50 {
		t.Errorf("%d reads put back %d of %d bytes", reads, got.Len(), len(text))
	}

	png, err := b.store.Save(ctx, artifact.Artifact{Agent: "scribe", Name: "shot.png", MediaType: "image/png"}, []byte("\x89PNG\r\n\x1a\n\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	var r Reading
	res := b.ok(t, "scribe", "", "read", map[string]any{"id": png.ID}, &r)
	if !r.Binary || r.Text != "" || strings.Contains(res.Text, "PNG\\r") || !strings.Contains(r.Note, "shot.png (version 1, image/png, 10 bytes) is not text") {
		t.Errorf("a binary read: %+v", r)
	}
	// A new version of the picture without a media type would be text stored as image/png.
	if res := b.call(t, "scribe", "", "write", map[string]any{"previous": png.ID, "content": "not a picture"}); !res.IsError || !strings.Contains(res.Text, "is image/png, and artifacts.write saves text") {
		t.Errorf("a text version typed as the picture: %+v", res)
	}
	if vs, err := b.store.Versions(ctx, png.ID); err != nil || len(vs) != 1 {
		t.Errorf("versions %d %v", len(vs), err)
	}
}

func TestWriteRefusesWhatIsNotAPlainTextFile(t *testing.T) {
	b := newBundle(t)
	b.refused(t, "scribe", "", "write", map[string]any{"name": "../etc/passwd", "content": "x"}, "not a path")
	b.refused(t, "scribe", "", "write", map[string]any{"name": "a\u202etxt.exe", "content": "x"}, "invisible character")
	b.refused(t, "scribe", "", "write", map[string]any{"name": "page.bin", "media_type": "application/octet-stream", "content": "x"}, "is not a text media type")
	b.refused(t, "scribe", "", "write", map[string]any{"content": "x"}, "needs a name")
	// What is written is UTF-8 (the call is JSON): a type naming another charset would mislabel it.
	b.refused(t, "scribe", "", "write", map[string]any{"name": "a.txt", "media_type": "text/plain; charset=utf-16", "content": "x"}, "UTF-8")
	b.refused(t, "scribe", "", "write", map[string]any{"name": "a.csv", "media_type": "text/csv;charset=ISO-8859-1", "content": "x"}, "UTF-8")
	b.refused(t, "scribe", "", "write", map[string]any{"name": "big.txt", "content": strings.Repeat("é", MaxWrite/2+1)}, "at most 1.0 MiB")
	if list, _ := b.store.List(context.Background(), artifact.Filter{}); len(list) != 0 {
		t.Errorf("refused writes left %d artifacts", len(list))
	}
}

func TestWriteKeepsAUTF8Charset(t *testing.T) {
	b := newBundle(t)
	var w Written
	b.ok(t, "scribe", "", "write", map[string]any{"name": "a.txt", "media_type": "text/plain; charset=UTF-8", "content": "é"}, &w)
	var r Reading
	b.ok(t, "scribe", "", "read", map[string]any{"id": w.Artifact}, &r)
	if r.Text != "é" || r.Binary {
		t.Errorf("read back %+v", r)
	}
	// A new version of a UTF-16 file does not inherit a charset its text is not in.
	u16, err := b.store.Save(context.Background(), artifact.Artifact{Agent: "scribe", Name: "w.txt", MediaType: "text/plain; charset=utf-16"}, []byte{0xff, 0xfe, 'a', 0})
	if err != nil {
		t.Fatal(err)
	}
	b.refused(t, "scribe", "", "write", map[string]any{"previous": u16.ID, "content": "a"}, "give media_type")
	b.ok(t, "scribe", "", "write", map[string]any{"previous": u16.ID, "media_type": "text/plain", "content": "a"}, nil)
}

func TestAttachGivesTheDataTheChatDraws(t *testing.T) {
	b := newBundle(t)
	var w Written
	b.ok(t, "scribe", convA, "write", map[string]any{"name": "report.csv", "media_type": "text/csv", "content": "a,b\n1,2\n"}, &w)
	var got map[string]any
	res := b.ok(t, "scribe", convA, "attach", map[string]any{"id": w.Artifact}, &got)
	want := map[string]any{"renderer": "file", "artifact": w.Artifact, "name": "report.csv", "title": "report.csv", "media_type": "text/csv", "version": float64(1), "bytes": float64(8)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attach data %s = %v, want %v", k, got[k], v)
		}
	}
	if !strings.Contains(res.Text, "Attached report.csv (version 1, text/csv, 8 bytes)") {
		t.Errorf("attach text %q", res.Text)
	}
}

func TestArtifactsSurviveThePluginsRemoval(t *testing.T) {
	b := newBundle(t)
	ctx := context.Background()
	m := Manifest(Deps{Store: b.store})
	if m.Schema != "" || m.Migrations != nil {
		t.Fatalf("the plugin owns a schema (%q): its removal could take the owner's files", m.Schema)
	}
	var w Written
	b.ok(t, "scribe", convA, "write", map[string]any{"name": "keep.txt", "content": "the owner's file"}, &w)
	row := func() string {
		var s string
		if err := b.pool.QueryRow(ctx, `SELECT row_to_json(a)::text FROM core.artifacts a WHERE id = $1`, w.Artifact).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := row()

	// A build without the plugin: no artifacts tool, migrations with no plugin set at all.
	reg, err := registry.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Lookup(Name + ".read"); ok {
		t.Fatal("the registry without the plugin has its tools")
	}
	if _, err := migrations.Up(ctx, b.pool, nil); err != nil {
		t.Fatal(err)
	}
	if after := row(); after != before {
		t.Errorf("the row changed:\n%s\n%s", before, after)
	}
	store := artifact.NewStore(b.pool, b.dir)
	a, data, err := store.Open(ctx, w.Artifact)
	if err != nil || string(data) != "the owner's file" || a.SHA256 != w.SHA256 {
		t.Errorf("core's store after the plugin is gone: %+v %q %v", a, data, err)
	}
}

func TestWithoutAStoreEveryToolSaysSo(t *testing.T) {
	reg, err := registry.New(Manifest(Deps{}))
	if err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), plugins.Call{Tool: Name + ".list", Agent: "scribe", Args: json.RawMessage(`{}`)}, nil)
	if !res.IsError || !strings.Contains(res.Text, "no artifact store") {
		t.Errorf("list without a store: %q", res.Text)
	}
}
