package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/registry"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
	"buddi/plugins/memory"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// bundle is the plugin over a real, migrated database, in a registry, on a clock the test
// moves.
type bundle struct {
	pool  *pgxpool.Pool
	reg   *registry.Registry
	store *memory.Store
	now   time.Time
}

func newBundle(t *testing.T) *bundle {
	t.Helper()
	pool := pgtest.Pool(t)
	return bundleOver(t, pool, true)
}

func bundleOver(t *testing.T, pool *pgxpool.Pool, migrate bool) *bundle {
	t.Helper()
	p := memory.New(memory.Deps{Pool: pool})
	m := p.Manifest()
	if migrate {
		if _, err := migrations.Up(context.Background(), pool, nil, migrations.Set{Schema: m.Schema, FS: m.Migrations}); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := registry.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{pool: pool, reg: reg, store: p.Store(), now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
}

// call runs tool as agent in conversation conv through the registry (schema, timeout,
// result), at the bundle's clock.
func (b *bundle) call(t *testing.T, agent, conv, tool string, args any) plugins.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return b.reg.Execute(context.Background(), plugins.Call{Tool: tool, Agent: agent, ConversationID: conv,
		RunID: "run-" + conv, Args: raw, Now: b.now, Owner: &plugins.OwnerRequest{Surface: "terminal", ExpiresAt: b.now.Add(time.Hour)}}, nil)
}

// ok runs tool and decodes its successful result into out.
func (b *bundle) ok(t *testing.T, agent, conv, tool string, args, out any) {
	t.Helper()
	res := b.call(t, agent, conv, tool, args)
	if res.IsError {
		t.Fatalf("%s as %s: %s", tool, agent, res.Text)
	}
	if string(res.Data) != res.Text {
		t.Errorf("%s: the canvas data is not the payload", tool)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(res.Text), out); err != nil {
			t.Fatalf("%s: %v in %s", tool, err, res.Text)
		}
	}
}

func (b *bundle) remember(t *testing.T, agent, conv string, args map[string]any) int64 {
	t.Helper()
	var out struct {
		Remembered int64 `json:"remembered"`
	}
	b.ok(t, agent, conv, "memory.remember", args, &out)
	if out.Remembered == 0 {
		t.Fatal("memory.remember gave no id")
	}
	return out.Remembered
}

func (b *bundle) recall(t *testing.T, agent, conv, query string) memory.Recall {
	t.Helper()
	var out memory.Recall
	b.ok(t, agent, conv, "memory.recall", map[string]any{"query": query}, &out)
	if out.Source != "memory" || out.Rule != memory.Rule {
		t.Errorf("recall %q is not marked as memory: %+v", query, out)
	}
	return out
}

func ids(r memory.Recall) []int64 {
	var out []int64
	for _, n := range r.Notes {
		out = append(out, n.ID)
	}
	return out
}

func TestAPreferenceCorrectedTwiceKeepsThreeRevisions(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	ctx := context.Background()
	// The agent records what the owner said; the owner corrects it on the Memory page; the
	// agent records the owner's second correction.
	var first map[string]any
	b.ok(t, "concierge", "c1", "memory.prefer", map[string]any{"key": "Reply  Language", "value": "German"}, &first)
	if first["revision"] != 1.0 || first["key"] != "reply language" || first["previous"] != nil {
		t.Errorf("first statement: %v", first)
	}
	b.now = b.now.Add(time.Hour)
	if _, prev, err := b.store.Prefer(ctx, memory.NewPreference{Key: "reply language", Value: "English", Author: memory.Owner, At: b.now}); err != nil || prev == nil || prev.Value != "German" {
		t.Fatalf("the owner's correction: %v, previous %+v", err, prev)
	}
	b.now = b.now.Add(time.Hour)
	var third map[string]any
	b.ok(t, "concierge", "c2", "memory.prefer", map[string]any{"key": "reply language", "value": "English, short"}, &third)
	if third["revision"] != 3.0 || third["previous"] != "English" {
		t.Errorf("second correction: %v", third)
	}
	// Saying the current value again writes nothing.
	b.ok(t, "concierge", "c3", "memory.prefer", map[string]any{"key": "reply language", "value": "English, short"}, nil)

	all, err := b.store.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("%d revisions, want 3: %+v", len(all), all)
	}
	byRev := map[int]memory.Preference{}
	current := 0
	for _, p := range all {
		byRev[p.Revision] = p
		if p.SupersededAt == nil {
			current++
		}
	}
	if current != 1 || byRev[3].SupersededAt != nil || byRev[3].Value != "English, short" || byRev[3].Author != "concierge" || byRev[3].ConversationID != "c2" {
		t.Errorf("the current revision: %+v (%d current)", byRev[3], current)
	}
	if byRev[1].Value != "German" || byRev[1].Author != "concierge" || byRev[1].SupersededBy == nil || *byRev[1].SupersededBy != byRev[2].ID ||
		!byRev[1].SupersededAt.Equal(byRev[2].CreatedAt) {
		t.Errorf("revision 1 is not superseded by 2: %+v", byRev[1])
	}
	if byRev[2].Value != "English" || byRev[2].Author != memory.Owner || byRev[2].SupersededBy == nil || *byRev[2].SupersededBy != byRev[3].ID {
		t.Errorf("revision 2 is not superseded by 3: %+v", byRev[2])
	}
	var listed struct {
		Rule        string                     `json:"rule"`
		Preferences []memory.CurrentPreference `json:"preferences"`
	}
	b.ok(t, "other", "c9", "memory.preferences", map[string]any{}, &listed)
	if len(listed.Preferences) != 1 || listed.Preferences[0].Value != "English, short" || listed.Preferences[0].Revision != 3 || listed.Rule != memory.Rule {
		t.Errorf("memory.preferences: %+v", listed)
	}
	// Never overwritten, never deleted, whoever asks the database.
	for _, sql := range []string{
		"UPDATE memory.preferences SET value = 'French' WHERE revision = 3",
		"UPDATE memory.preferences SET superseded_at = now() WHERE revision = 1",
		"DELETE FROM memory.preferences WHERE revision = 1",
	} {
		if _, err := b.pool.Exec(ctx, sql); err == nil {
			t.Errorf("%s was allowed", sql)
		}
	}
}

func TestANoteIsRecalledInALaterConversation(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	id := b.remember(t, "concierge", "conv-monday", map[string]any{"text": "The owner's dentist is Dr. Alvarez; appointments are on Thursday mornings."})
	b.remember(t, "concierge", "conv-monday", map[string]any{"text": "The owner pays the water invoice every quarter."})
	b.now = b.now.Add(72 * time.Hour)
	for _, q := range []string{"dentist", "Dentist appointment", "dentst", "Alvares", "appointment"} {
		got := b.recall(t, "concierge", "conv-thursday", q)
		if len(got.Notes) == 0 || got.Notes[0].ID != id {
			t.Errorf("recall %q in a later conversation: %v", q, ids(got))
			continue
		}
		n := got.Notes[0]
		if n.Kind != "memory" || n.Agent != "concierge" || !n.Mine || n.Scope != "private" || n.ConversationID != "conv-monday" ||
			n.RunID != "run-conv-monday" || !n.CreatedAt.Equal(b.now.Add(-72*time.Hour)) || !strings.Contains(n.Text, "Dr. Alvarez") {
			t.Errorf("recall %q: the note lost its provenance: %+v", q, n)
		}
	}
	if got := b.recall(t, "concierge", "conv-thursday", "garden hose"); len(got.Notes) != 0 {
		t.Errorf("an unrelated query recalled %v", ids(got))
	}
	if got := b.recall(t, "concierge", "conv-thursday", "the"); len(got.Notes) != 0 {
		t.Errorf("a stop word recalled %v", ids(got))
	}
}

func TestAForgottenNoteIsNeverRecalledAndStaysAuditable(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	ctx := context.Background()
	id := b.remember(t, "concierge", "c1", map[string]any{"text": "The owner's locker code is kept in the blue notebook.", "scope": "shared"})
	if got := b.recall(t, "concierge", "c2", "locker"); len(got.Notes) != 1 {
		t.Fatalf("before forgetting: %v", ids(got))
	}
	// Another agent may recall the shared note but not forget it.
	if res := b.call(t, "scout", "c2", "memory.forget", map[string]any{"id": id}); !res.IsError || !strings.Contains(res.Text, "no such note of yours") {
		t.Errorf("another agent forgot the note: %s", res.Text)
	}
	b.now = b.now.Add(time.Minute)
	b.ok(t, "concierge", "c2", "memory.forget", map[string]any{"id": id}, nil)
	for _, agent := range []string{"concierge", "scout"} {
		for _, q := range []string{"locker", "lockr code", "blue notebook"} {
			if got := b.recall(t, agent, "c3", q); len(got.Notes) != 0 {
				t.Errorf("%s recalled the forgotten note with %q: %v", agent, q, ids(got))
			}
		}
	}
	if res := b.call(t, "concierge", "c3", "memory.forget", map[string]any{"id": id}); !res.IsError || !strings.Contains(res.Text, "already forgotten") {
		t.Errorf("forgetting twice: %s", res.Text)
	}
	// The owner still sees it, marked, with who forgot it and when.
	notes, err := b.store.Notes(ctx, "concierge", 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0].ID != id || notes[0].DeletedAt == nil || !notes[0].DeletedAt.Equal(b.now) || notes[0].DeletedBy != "concierge" ||
		notes[0].ConversationID != "c1" || !strings.Contains(notes[0].Text, "blue notebook") {
		t.Errorf("the audit of the forgotten note: %+v", notes)
	}
	for _, sql := range []string{
		"DELETE FROM memory.notes",
		"UPDATE memory.notes SET deleted_at = NULL, deleted_by = NULL",
		"UPDATE memory.notes SET body = 'rewritten'",
	} {
		if _, err := b.pool.Exec(ctx, sql); err == nil {
			t.Errorf("%s was allowed", sql)
		}
	}
}

func TestAnotherAgentsPrivateNoteIsNeverRecalled(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	private := b.remember(t, "concierge", "c1", map[string]any{"text": "The owner is planning a surprise party for Maria."})
	if got := b.recall(t, "scout", "c2", "surprise party"); len(got.Notes) != 0 {
		t.Errorf("scout recalled concierge's private note: %v", ids(got))
	}
	if got := b.recall(t, "scout", "c2", "suprise"); len(got.Notes) != 0 {
		t.Errorf("scout recalled concierge's private note by trigram: %v", ids(got))
	}
	shared := b.remember(t, "concierge", "c1", map[string]any{"text": "The party venue is the garden restaurant.", "scope": "shared"})
	got := b.recall(t, "scout", "c2", "party")
	if len(got.Notes) != 1 || got.Notes[0].ID != shared || got.Notes[0].Mine || got.Notes[0].Agent != "concierge" || got.Notes[0].Scope != "shared" {
		t.Errorf("scout's recall of party: %+v", got.Notes)
	}
	if got := b.recall(t, "concierge", "c3", "party"); len(got.Notes) != 2 {
		t.Errorf("concierge's own recall of party: %v (private %d, shared %d)", ids(got), private, shared)
	}
}

func TestAnExpiredNoteIsNotRecalled(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	id := b.remember(t, "concierge", "c1", map[string]any{"text": "The parcel locker pickup code is valid this week.", "expires_in_days": 2})
	b.now = b.now.Add(47 * time.Hour)
	if got := b.recall(t, "concierge", "c2", "parcel"); len(got.Notes) != 1 || got.Notes[0].ID != id || got.Notes[0].ExpiresAt == nil {
		t.Errorf("before its expiry: %+v", got.Notes)
	}
	b.now = b.now.Add(2 * time.Hour)
	if got := b.recall(t, "concierge", "c2", "parcel"); len(got.Notes) != 0 {
		t.Errorf("after its expiry: %v", ids(got))
	}
	// Still listed for the owner.
	if notes, err := b.store.Notes(context.Background(), "", 10); err != nil || len(notes) != 1 {
		t.Errorf("the owner's list: %v %+v", err, notes)
	}
}

func TestBoundsAreToldInOneSentence(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory.remember", map[string]any{"text": strings.Repeat("é", 2100)}, "4200 bytes, more than the 4096 kept"},
		{"memory.remember", map[string]any{"text": strings.Repeat("a", 4097)}, ""},
		{"memory.remember", map[string]any{"text": "   "}, "the note is empty"},
		{"memory.remember", map[string]any{"text": "x", "scope": "everyone"}, ""},
		{"memory.recall", map[string]any{"query": strings.Repeat("ü", 150)}, "300 bytes, more than the 200 kept"},
		{"memory.recall", map[string]any{"query": "x", "limit": 500}, ""},
		{"memory.prefer", map[string]any{"key": strings.Repeat("k", 101), "value": "v"}, ""},
		{"memory.forget", map[string]any{"id": 12345}, "no such note of yours"},
		// A note that would carry text the owner cannot read on the Memory page (tag characters
		// spelling an instruction for a later run, a zero-width space) is refused.
		{"memory.remember", map[string]any{"text": "The owner likes tea.\U000E0061\U000E006C\U000E0077"}, "no reader can see (U+E0061)"},
		{"memory.prefer", map[string]any{"key": "drink", "value": "tea\u200b"}, "no reader can see (U+200B)"},
	}
	for _, c := range cases {
		res := b.call(t, "concierge", "c1", c.tool, c.args)
		if !res.IsError || !strings.Contains(res.Text, c.want) {
			t.Errorf("%s %v: %v %s", c.tool, c.args, res.IsError, res.Text)
		}
		if strings.Count(strings.TrimSuffix(res.Text, "."), ". ") > 0 && c.want != "" {
			t.Errorf("%s: more than one sentence: %s", c.tool, res.Text)
		}
	}
	if notes, _ := b.store.Notes(context.Background(), "", 10); len(notes) != 0 {
		t.Errorf("refused notes were kept: %+v", notes)
	}
}

// The migration runs as a database owner that is not a superuser (pg_trgm is trusted), and
// the application role that Grant makes recalls with it.
func TestTheMigrationRunsAsTheOwnerRoleAndRecallAsTheAppRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.EmptyDSN(t)
	admin, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var database string
	if err := admin.QueryRow(ctx, "SELECT current_database()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano())
	owner, app := "t_mem_owner_"+suffix, "t_mem_app_"+suffix
	for _, sql := range []string{
		"CREATE ROLE " + owner + " NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE",
		"CREATE ROLE " + app + " NOLOGIN NOSUPERUSER NOINHERIT",
		"ALTER DATABASE " + pgx.Identifier{database}.Sanitize() + " OWNER TO " + owner,
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{database}.Sanitize()+" OWNER TO CURRENT_USER")
		for _, r := range []string{app, owner} {
			_, _ = c.Exec(ctx, "REASSIGN OWNED BY "+r+" TO CURRENT_USER")
			_, _ = c.Exec(ctx, "DROP OWNED BY "+r)
			_, _ = c.Exec(ctx, "DROP ROLE "+r)
		}
	})
	as := func(role string) *pgxpool.Pool {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "SET ROLE "+role)
			return err
		}
		p, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	ownerPool := as(owner)
	bundleOver(t, ownerPool, true)
	if err := migrations.Grant(ctx, ownerPool, app); err != nil {
		t.Fatal(err)
	}
	b := bundleOver(t, as(app), false)
	id := b.remember(t, "concierge", "c1", map[string]any{"text": "The owner's bike is in the cellar."})
	for _, q := range []string{"bike", "cellr"} {
		if got := b.recall(t, "concierge", "c2", q); len(got.Notes) != 1 || got.Notes[0].ID != id {
			t.Errorf("recall %q as the app role: %v", q, ids(got))
		}
	}
	b.ok(t, "concierge", "c2", "memory.prefer", map[string]any{"key": "coffee", "value": "black"}, nil)
	b.ok(t, "concierge", "c2", "memory.prefer", map[string]any{"key": "coffee", "value": "with milk"}, nil)
	b.ok(t, "concierge", "c2", "memory.forget", map[string]any{"id": id}, nil)
	if _, err := b.pool.Exec(ctx, "DELETE FROM memory.notes"); err == nil {
		t.Error("the app role deleted notes")
	}
}

// A preference is written only from a turn the owner is in: an unattended run, a
// colleague's delegated run and a remote caller's run are refused in one sentence, and
// nothing is written.
func TestOnlyTheOwnersTurnWritesAPreference(t *testing.T) {
	b := newBundle(t)
	args := json.RawMessage(`{"key":"payee","value":"mallory@evil.example"}`)
	owner := &plugins.OwnerRequest{Surface: "telegram", ExpiresAt: b.now.Add(time.Hour)}
	for name, c := range map[string]plugins.Call{
		"unattended": {},
		"delegated":  {Owner: owner, DelegationDepth: 1},
		"remote":     {Owner: owner, Remote: true},
	} {
		c.Tool, c.Agent, c.ConversationID, c.RunID, c.Args, c.Now = "memory.prefer", "triage", "c1", "r1", args, b.now
		res := b.reg.Execute(context.Background(), c, nil)
		if !res.IsError || !strings.Contains(res.Text, "no owner is in this run") {
			t.Errorf("%s: %+v", name, res)
		}
	}
	var n int
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM memory.preferences").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d preferences written (%v)", n, err)
	}
}

// A word the query excludes (-word, -"a phrase") keeps its notes out of the recall, also
// when the same word, as a keyword, would find them by its spelling.
func TestAnExcludedWordKeepsItsNotesOut(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.remember(t, "concierge", "c1", map[string]any{"text": "The owner is planning a surprise party for Maria."})
	venue := b.remember(t, "concierge", "c1", map[string]any{"text": "The party venue is the garden restaurant."})
	for _, q := range []string{"party -surprise", `party -"surprise party"`, "-surprise party", "party -suprise", "-surprise"} {
		got := b.recall(t, "concierge", "c2", q)
		if q == "party -suprise" { // a misspelled exclusion excludes nothing it does not match
			if len(got.Notes) != 2 {
				t.Errorf("recall %q: %v, want both notes", q, ids(got))
			}
			continue
		}
		if len(got.Notes) != 1 || got.Notes[0].ID != venue {
			t.Errorf("recall %q: %v, want only the venue (%d)", q, ids(got), venue)
		}
	}
}

// Recall ignores case in every script, and finds a word inside a longer one where words are
// not split by spaces (Chinese) or are inflected (Russian), whatever the database's locale.
func TestRecallIgnoresCaseAndFindsWordsInEveryScript(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	ru := b.remember(t, "concierge", "c1", map[string]any{"text": "Встреча с бухгалтером в пятницу."})
	el := b.remember(t, "concierge", "c1", map[string]any{"text": "Η συνάντηση είναι την Τρίτη."})
	zh := b.remember(t, "concierge", "c1", map[string]any{"text": "明天的会议在北京。"})
	fr := b.remember(t, "concierge", "c1", map[string]any{"text": "ÉTÉ: réunion à Genève."})
	for q, want := range map[string]int64{
		"встреча": ru, "ВСТРЕЧА": ru, "бухгалтер": ru,
		"Συνάντηση": el, "τρίτη": el,
		"会议": zh, "北京": zh,
		"été": fr, "RÉUNION": fr, "genève": fr,
	} {
		got := b.recall(t, "concierge", "c2", q)
		if len(got.Notes) != 1 || got.Notes[0].ID != want {
			t.Errorf("recall %q: %v, want %d", q, ids(got), want)
		}
	}
}

// No query, however it is written, makes recall fail: the words are never PostgreSQL's
// query syntax, and nothing in it reaches the SQL.
func TestNoQueryMakesRecallFail(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	id := b.remember(t, "concierge", "c1", map[string]any{"text": "Dr. O'Brien (dentist) at 3:30, C&A building; a|b@x.io"})
	for _, q := range []string{"'", `\`, "&", "|", "!", ":", "*", "(", ")", "<->", "&&", "!!", "a & b | !c", "dentist:*", "'dentist':A", `"`, `""`, "-", "--", "or", "OR OR",
		"'; DROP TABLE memory.notes; --", "1' OR '1'='1", "%", "_", "😀", "\u0301", strings.Repeat("(", 200), strings.Repeat(`\`, 200), strings.Repeat("ü", 100)} {
		b.recall(t, "concierge", "c2", q) // fails the test on an error
	}
	for _, q := range []string{"O'Brien", "(dentist)", "!dentist", "dentist:*", `"dentist`, "3:30", "C&A", "a|b@x.io"} {
		if got := b.recall(t, "concierge", "c2", q); len(got.Notes) != 1 || got.Notes[0].ID != id {
			t.Errorf("recall %q: %v", q, ids(got))
		}
	}
	var n int
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM memory.notes").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d notes after the queries (%v)", n, err)
	}
}

// Notes written before recall folded case are found by it after the upgrade, deleted ones
// stay deleted, and the trigger still keeps every note as written.
func TestNotesKeptBeforeTheUpgradeAreRecalledIgnoringCase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := memory.Manifest(memory.Deps{Pool: pool})
	first, err := fs.ReadFile(m.Migrations, "00001_memory.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.Up(ctx, pool, nil, migrations.Set{Schema: m.Schema, FS: fstest.MapFS{"00001_memory.sql": {Data: first}}}); err != nil {
		t.Fatal(err)
	}
	var kept, gone int64
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := pool.QueryRow(ctx, `INSERT INTO memory.notes (agent, body, created_at) VALUES ('concierge', 'Встреча с бухгалтером в пятницу.', $1) RETURNING id`, at).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `INSERT INTO memory.notes (agent, body, created_at) VALUES ('concierge', 'Встреча отменена.', $1) RETURNING id`, at).Scan(&gone); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE memory.notes SET deleted_at = $2, deleted_by = 'owner' WHERE id = $1`, gone, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	b := bundleOver(t, pool, true)
	if got := b.recall(t, "concierge", "c2", "встреча"); len(got.Notes) != 1 || got.Notes[0].ID != kept {
		t.Errorf("recall after the upgrade: %v, want %d", ids(got), kept)
	}
	for _, sql := range []string{"UPDATE memory.notes SET folded = 'rewritten'", "DELETE FROM memory.notes",
		"UPDATE memory.notes SET deleted_at = NULL, deleted_by = NULL"} {
		if _, err := pool.Exec(ctx, sql); err == nil {
			t.Errorf("%s was allowed", sql)
		}
	}
}

// A key within the bound as written but not once lowered (Ⱥ is two bytes, ⱥ three) is
// refused in one sentence, never by the database's check.
func TestAKeyLongerOnceLoweredIsRefusedInOneSentence(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	res := b.call(t, "concierge", "c1", "memory.prefer", map[string]any{"key": strings.Repeat("Ⱥ", 50), "value": "v"})
	if !res.IsError || !strings.Contains(res.Text, "more than the 100") {
		t.Errorf("a key of 150 bytes once lowered: %+v", res)
	}
	b.ok(t, "concierge", "c1", "memory.prefer", map[string]any{"key": strings.Repeat("Ⱥ", 33), "value": "v"}, nil)
}

// A misspelt or inflected keyword finds its note in any alphabet, as in English: pg_trgm
// makes trigrams of every letter (the cluster's character type is UTF-8, not C).
func TestRecallToleratesTyposInEveryAlphabet(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	ru := b.remember(t, "concierge", "c1", map[string]any{"text": "Встреча с бухгалтером в пятницу."})
	el := b.remember(t, "concierge", "c1", map[string]any{"text": "Η συνάντηση είναι την Τρίτη."})
	en := b.remember(t, "concierge", "c1", map[string]any{"text": "Dentist appointment on Thursday."})
	for q, want := range map[string]int64{
		"пятница": ru, "бухгалтр": ru,
		"συναντηση": el,
		"dentsit":   en, "thursdya": en,
	} {
		got := b.recall(t, "concierge", "c2", q)
		if len(got.Notes) != 1 || got.Notes[0].ID != want {
			t.Errorf("recall %q: %v, want %d", q, ids(got), want)
		}
	}
}
