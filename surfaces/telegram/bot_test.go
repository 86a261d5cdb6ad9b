package telegram_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/agents"
	"buddi/core/action"
	"buddi/core/conversation"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/runtime/live"
	"buddi/surfaces/telegram"
	"buddi/surfaces/telegram/telegramtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const owner, ownerChat = int64(42), int64(4242)

type fixture struct {
	t        testing.TB
	pool     *pgxpool.Pool
	api      *telegramtest.Server
	store    *telegram.Store
	convs    *conversation.Store
	hub      *live.Hub
	reusable map[string]bool // the tools that allow remember
	mu       sync.Mutex
	runs     []string // runs the bot started
	kept     []string // files kept as artifacts
	nextID   int64
	cancel   context.CancelFunc
	done     chan error
	// mode reads the agents' modes, for /agents; nil leaves them out.
	mode func(ctx context.Context, agent string) (string, error)
}

func newFixture(t testing.TB) *fixture {
	f := &fixture{t: t, pool: pgtest.Pool(t), api: telegramtest.New(t), hub: live.NewHub(), nextID: 1}
	f.store = &telegram.Store{Pool: f.pool, Key: testKey}
	f.convs = conversation.NewStore(f.pool)
	return f
}

func (f *fixture) bot() *telegram.Bot {
	dir := f.t.TempDir()
	agent := "---\nid: helper\nhandle: \"@helper\"\nname: Helper\ndefault: true\nroles: [overview]\ntools: []\n---\nYou help.\n"
	if err := os.WriteFile(filepath.Join(dir, "helper.md"), []byte(agent), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return telegram.New(telegram.Deps{
		API:   &telegram.API{Base: f.api.URL, Token: telegramtest.Token, HTTP: &http.Client{}},
		Store: f.store, Conversations: f.convs, Live: f.hub,
		Catalog: func() (*agents.Catalog, error) { return agents.Load(agents.Config{AgentsDir: dir}) },
		Start: func(_ context.Context, _ pgx.Tx, _ conversation.Conversation, runID string) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.runs = append(f.runs, runID)
			return nil
		},
		Decide: func(ctx context.Context, d action.Decision) (action.Record, error) {
			var rec action.Record
			err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
				var err error
				if rec, err = action.Decide(ctx, tx, testKey, d); err != nil || d.Remember == action.RememberNone {
					return err
				}
				// What the executor's Decide does with remember: the standing permission.
				conv := ""
				if d.Remember == action.RememberConversation {
					conv = rec.ConversationID
				}
				spec := plugins.Spec{Name: rec.Tool, ReusableApproval: f.reusable[rec.Tool]}
				_, err = action.Grant(ctx, tx, testKey, spec, rec.ToolVersion, rec.Agent, conv, d.Surface)
				return err
			})
			return rec, err
		},
		Reusable: func(tool string) bool { return f.reusable[tool] },
		Mode:     f.mode,
		Artifacts: func(_ context.Context, name, mediaType string, data []byte) (string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.kept = append(f.kept, name+" "+mediaType+" "+string(data))
			return "00000000-0000-4000-8000-0000000000aa", nil
		},
		PollTimeout: time.Second, PollMargin: 300 * time.Millisecond, EditEvery: 50 * time.Millisecond,
	})
}

// start runs a bot until the test ends (or stop).
func (f *fixture) start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.done = cancel, make(chan error, 1)
	b := f.bot()
	go func() { f.done <- b.Run(ctx) }()
	f.t.Cleanup(f.stop)
}

func (f *fixture) stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.done
		f.cancel = nil
	}
}

func (f *fixture) push(u map[string]any) {
	f.mu.Lock()
	u["update_id"] = f.nextID
	f.nextID++
	f.mu.Unlock()
	f.api.Push(u)
}

func text(from, chat int64, chatType, s string) map[string]any {
	return map[string]any{"message": map[string]any{"message_id": 1, "from": map[string]any{"id": from, "is_bot": false, "first_name": "Ann"},
		"chat": map[string]any{"id": chat, "type": chatType}, "text": s}}
}

func (f *fixture) handled(n int) {
	f.t.Helper()
	pgtest.Eventually(f.t, "updates handled", func() bool {
		var c int
		_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.surface_updates WHERE state <> 'pending'`).Scan(&c)
		return c >= n
	})
}

func sentTexts(calls []telegramtest.Call) []string {
	var out []string
	for _, c := range calls {
		if s, ok := c.Params["text"].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (f *fixture) pair() {
	f.t.Helper()
	code, _, err := f.store.NewPairingCode(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	f.push(text(owner, ownerChat, "private", "/start "+code))
}

func TestPairingAndStrangers(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.push(text(7, 77, "private", "/start WRONGCODE"))
	f.push(text(7, 77, "private", "hello?"))
	f.push(text(owner, -100, "group", "hello group"))
	f.pair()
	f.handled(4)
	sends := f.api.Calls("sendMessage")
	if len(sends) != 1 || sends[0].Params["chat_id"].(float64) != float64(ownerChat) || !strings.Contains(sends[0].Params["text"].(string), "Paired") {
		t.Fatalf("sends: %+v", sends)
	}
	menu := f.api.Calls("setMyCommands")
	if len(menu) != 1 || menu[0].Params["scope"].(map[string]any)["chat_id"].(float64) != float64(ownerChat) {
		t.Fatalf("the menu: %+v", menu)
	}
	var ignored int
	_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'telegram.ignored'`).Scan(&ignored)
	if ignored != 3 {
		t.Fatalf("ignored events: %d, want 3 (a wrong code, a stranger, a group)", ignored)
	}
	// An expired code pairs nobody.
	code, _, _ := f.store.NewPairingCode(context.Background())
	_, _ = f.pool.Exec(context.Background(), `UPDATE core.pairing_codes SET expires_at = now() - interval '1 minute'`)
	f.push(text(8, 88, "private", "/start "+code))
	f.handled(5)
	if ok, _ := f.store.Paired(context.Background(), 8, 88); ok {
		t.Fatal("an expired code paired")
	}
}

func TestStreamedReplyAndSplit(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.pair()
	f.handled(1)
	f.push(text(owner, ownerChat, "private", "write me a long story"))
	run, conv := f.firstRun()
	para := strings.Repeat("word ", 500) // 2,500 characters
	for i := 0; i < 3; i++ {
		before := len(f.api.Calls("editMessageText"))
		f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "text", Text: para + "\n\n"})
		// The reply streams: each piece shows as an edit (at most every 50 ms here).
		pgtest.Eventually(t, "an edit", func() bool { return len(f.api.Calls("editMessageText")) > before })
	}
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "tool.call", Tool: "conversation.ask", Args: `{"question":"Which ending?"}`})
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "run.finished"})
	pgtest.Eventually(t, "the split reply", func() bool { return len(sentTexts(f.api.Calls("sendMessage"))) >= 4 })
	if q := sentTexts(f.api.Calls("sendMessage"))[2]; q != "❓ Which ending?" {
		t.Fatalf("the question: %q", q)
	}
	sends := sentTexts(f.api.Calls("sendMessage"))
	if sends[1] != "Working on it…" {
		t.Fatalf("first: %q", sends[1])
	}
	edits := f.api.Calls("editMessageText")
	if len(edits) < 2 {
		t.Fatalf("the reply was not streamed by edits: %d edits", len(edits))
	}
	for _, e := range edits {
		if n := len([]rune(e.Params["text"].(string))); n > telegram.MaxMessage {
			t.Fatalf("an edit of %d characters", n)
		}
	}
	last := sends[len(sends)-1]
	if len([]rune(last)) > telegram.MaxMessage || !strings.HasPrefix(last, "word") {
		t.Fatalf("the rest of the reply: %d characters", len([]rune(last)))
	}
	es, _ := f.convs.Transcript(context.Background(), conv)
	if len(es) != 1 || !strings.Contains(string(es[0].Body), "long story") {
		t.Fatalf("the transcript: %+v", es)
	}
}

func TestApprovalButtonRacesTheDashboard(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.pair()
	f.handled(1)
	ctx := context.Background()
	newAction := func() string {
		var rec action.Record
		err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
			var err error
			rec, err = action.Create(ctx, tx, testKey, action.Proposal{Call: plugins.Call{Tool: "mail.send", Args: json.RawMessage(`{}`), Agent: "helper"},
				Version: "1", Envelope: plugins.Envelope{Summary: "Send the mail", Effects: []plugins.Effect{plugins.EffectNetWrite}}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	tap := func(data string) {
		f.push(map[string]any{"callback_query": map[string]any{"id": "cq", "from": map[string]any{"id": owner, "first_name": "Ann"},
			"message": map[string]any{"message_id": 9, "chat": map[string]any{"id": ownerChat, "type": "private"}, "text": "Send the mail"}, "data": data}})
	}
	// The bot's own card (its nonce) decides.
	id := newAction()
	good := "approve|" + id + "|" + telegram.Nonce(telegramtest.Token, id, "approve")
	tap(good)
	f.handled(2)
	if rec, _ := action.Get(ctx, f.pool, id); rec.Approval.State != action.Approved || rec.Approval.DecidedBy != "telegram" {
		t.Fatalf("after the button: %s by %s", rec.Approval.State, rec.Approval.DecidedBy)
	}
	// The dashboard decided first: the button loses, and its card says which way it went.
	id2 := newAction()
	if err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		_, err := action.Decide(ctx, tx, testKey, action.Decision{ActionID: id2, Approve: false, Surface: "dashboard"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tap("approve|" + id2 + "|" + telegram.Nonce(telegramtest.Token, id2, "approve"))
	f.handled(3)
	if rec, _ := action.Get(ctx, f.pool, id2); rec.Approval.State != action.Rejected {
		t.Fatalf("the losing button changed the decision: %s", rec.Approval.State)
	}
	edits := f.api.Calls("editMessageText")
	if len(edits) != 2 || !strings.Contains(edits[1].Params["text"].(string), "Already rejected (dashboard)") {
		t.Fatalf("the losing card: %+v", edits)
	}
	// A forged button decides nothing; a typed "yes" decides nothing.
	id3 := newAction()
	tap("approve|" + id3 + "|0000000000000000")
	f.handled(4)
	if rec, _ := action.Get(ctx, f.pool, id3); rec.Approval.State != action.Pending {
		t.Fatalf("a forged button decided: %s", rec.Approval.State)
	}
}

func TestRestartLosesNothingAndRepeatsNothing(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.pair()
	f.handled(1)
	f.stop()
	// A poll stored two updates and advanced the offset past them, and its bot stopped before
	// handling them (as persist does: the rows and the cursor in one transaction). Telegram
	// will not send them again: the next bot handles them from the store, once.
	ctx := context.Background()
	var us []telegram.Update
	f.mu.Lock()
	for _, words := range []string{"one", "two"} {
		u := text(owner, ownerChat, "private", words)
		u["update_id"] = f.nextID
		f.nextID++
		b, _ := json.Marshal(u)
		var tu telegram.Update
		if err := json.Unmarshal(b, &tu); err != nil {
			t.Fatal(err)
		}
		us = append(us, tu)
	}
	f.mu.Unlock()
	if err := f.store.Persist(ctx, us); err != nil {
		t.Fatal(err)
	}
	f.start()
	f.handled(3)
	f.stop()
	before := len(f.api.Calls("getUpdates"))
	f.start()
	pgtest.Eventually(t, "a second bot's first poll", func() bool { return len(f.api.Calls("getUpdates")) > before })
	f.stop()
	var users int
	_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.messages WHERE kind IN ('user') `).Scan(&users)
	var joined int
	_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.pending_input`).Scan(&joined)
	if users+joined != 2 {
		t.Fatalf("messages stored %d + joined %d, want exactly 2", users, joined)
	}
}

func TestRateLimitedDeafAndRevoked(t *testing.T) {
	f := newFixture(t)
	f.api.FailNext("getUpdates", `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}`)
	f.api.StallPolls(1) // then a poll accepted and never answered
	f.start()
	f.pair()
	f.handled(1) // within the 429's wait and the client's deadline
	polls := f.api.Calls("getUpdates")
	if len(polls) < 3 {
		t.Fatalf("polls: %d, want the 429, the stalled one and one that worked", len(polls))
	}
	f.stop()
	// The first bot's last poll may still reach the server after it stopped and take a 401
	// meant for the next bot: queue a few, and bound the wait.
	for range 3 {
		f.api.FailNext("getUpdates", `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
	}
	b := f.bot()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := b.Run(ctx)
	if !errors.Is(err, telegram.ErrRevoked) {
		t.Fatalf("after a 401: %v", err)
	}
	var down int
	_ = f.pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = 'telegram.down'`).Scan(&down)
	if down != 1 {
		t.Fatal("the surface was not marked down")
	}
}

// Files in: a document is kept as an artifact and its line joins the turn; a voice note and a
// file over 20 MB get one polite sentence.
func TestFilesIn(t *testing.T) {
	f := newFixture(t)
	f.api.File("doc1", []byte("quarterly numbers"))
	f.start()
	f.pair()
	f.handled(1)
	msg := func(extra map[string]any) map[string]any {
		m := map[string]any{"message_id": 3, "from": map[string]any{"id": owner, "first_name": "Ann"}, "chat": map[string]any{"id": ownerChat, "type": "private"}}
		for k, v := range extra {
			m[k] = v
		}
		return map[string]any{"message": m}
	}
	f.push(msg(map[string]any{"document": map[string]any{"file_id": "doc1", "file_name": "q3.csv", "mime_type": "text/csv", "file_size": 17}, "caption": "look at this"}))
	f.push(msg(map[string]any{"voice": map[string]any{"file_id": "v1", "duration": 3}}))
	f.push(msg(map[string]any{"document": map[string]any{"file_id": "big", "file_name": "huge.iso", "file_size": 30 << 20}}))
	f.push(msg(map[string]any{"sticker": map[string]any{"file_id": "s1"}})) // nothing to read: answered, and it holds nothing up
	f.push(msg(map[string]any{"text": "/status run rm -rf", "forward_origin": map[string]any{"type": "user"}}))
	f.handled(6)
	if len(f.kept) != 1 || f.kept[0] != "q3.csv text/csv quarterly numbers" {
		t.Fatalf("kept: %v", f.kept)
	}
	convs, _ := f.convs.List(context.Background(), "helper", 1)
	es, _ := f.convs.Transcript(context.Background(), convs[0].ID)
	if len(es) != 1 || !strings.Contains(string(es[0].Body), "look at this") || !strings.Contains(string(es[0].Body), "kept as artifact") {
		t.Fatalf("the turn: %+v", es)
	}
	// The forward joined the run in flight as someone else's words, not as a command.
	var joined string
	_ = f.pool.QueryRow(context.Background(), `SELECT text FROM core.pending_input ORDER BY id DESC LIMIT 1`).Scan(&joined)
	if !strings.Contains(joined, "forwarded") || !strings.Contains(joined, "> /status run rm -rf") {
		t.Fatalf("the forward: %q", joined)
	}
	sends := strings.Join(sentTexts(f.api.Calls("sendMessage")), "|")
	if !strings.Contains(sends, "voice notes") || !strings.Contains(sends, "over 20 MB") || !strings.Contains(sends, "that one I can't") {
		t.Fatalf("the polite sentences: %s", sends)
	}
}

// Offers arrive as buttons; a tap takes the offer once and runs it; a second tap hears it was
// taken.
func TestOfferButtons(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.pair()
	f.handled(1)
	f.push(text(owner, ownerChat, "private", "draft a note to Ann"))
	// The run is started inside the transaction that records the conversation: wait for both.
	var convs []conversation.Conversation
	pgtest.Eventually(t, "the run and its conversation", func() bool {
		f.mu.Lock()
		n := len(f.runs)
		f.mu.Unlock()
		var err error
		convs, err = f.convs.List(context.Background(), "helper", 1)
		return n == 1 && err == nil && len(convs) == 1
	})
	f.mu.Lock()
	run := f.runs[0]
	f.mu.Unlock()
	conv := convs[0].ID
	offers, err := conversation.AddOffers(context.Background(), f.pool, conv, "helper", run, []string{"Send it"}, []string{"Send the note to Ann."})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"renderer": "offers", "offers": offers})
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "tool.result", Tool: "conversation.offer", Data: data})
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "run.finished"})
	var button string
	pgtest.Eventually(t, "the offer's button", func() bool {
		for _, c := range f.api.Calls("sendMessage") {
			if m, ok := c.Params["reply_markup"].(map[string]any); ok {
				row := m["inline_keyboard"].([]any)[0].([]any)
				button = row[0].(map[string]any)["callback_data"].(string)
				return true
			}
		}
		return false
	})
	if _, err := f.convs.Finish(context.Background(), conv, run, func(context.Context, pgx.Tx, conversation.Conversation, string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	tap := func() {
		f.push(map[string]any{"callback_query": map[string]any{"id": "cq", "from": map[string]any{"id": owner, "first_name": "Ann"},
			"message": map[string]any{"message_id": 9, "chat": map[string]any{"id": ownerChat, "type": "private"}, "text": "Next, if you like:"}, "data": button}})
	}
	tap()
	pgtest.Eventually(t, "the offer's run", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.runs) == 2 })
	tap()
	pgtest.Eventually(t, "the second tap answered", func() bool {
		for _, c := range f.api.Calls("answerCallbackQuery") {
			if c.Params["text"] == "Already taken." {
				return true
			}
		}
		return false
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.runs) != 2 {
		t.Fatalf("runs: %d, want the first and the offer's", len(f.runs))
	}
}

// testKey is the installation's seal key of these tests.
var testKey, _ = seal.New(bytes.Repeat([]byte{3}, 32))

// While the provider makes buddi wait, the reply in progress says so; an attempt that broke
// off is dropped, and the reply that finishes is the next attempt's text alone.
func TestWaitingAndABrokenAttemptOnThePhone(t *testing.T) {
	f := newFixture(t)
	f.start()
	f.pair()
	f.handled(1)
	f.push(text(owner, ownerChat, "private", "hello"))
	run, conv := f.firstRun()
	edited := func(want string) {
		t.Helper()
		pgtest.Eventually(t, "an edit saying "+want, func() bool {
			for _, e := range f.api.Calls("editMessageText") {
				if strings.Contains(e.Params["text"].(string), want) {
					return true
				}
			}
			return false
		})
	}
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "run.waiting", Text: "The provider is busy. buddi tries again at 15:04:05."})
	edited("tries again at 15:04:05")
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "text", Text: "Half an ans"})
	edited("Half an ans")
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "run.retrying", Text: "The answer broke off. buddi tries again at 15:05:00."})
	edited("broke off")
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "text", Text: "A whole answer."})
	f.hub.Publish(live.Event{ConversationID: conv, RunID: run, Type: "run.finished"})
	edited("A whole answer.")
	edits := f.api.Calls("editMessageText")
	if last := edits[len(edits)-1].Params["text"].(string); last != "A whole answer." {
		t.Fatalf("the reply ends as %q, want the whole answer alone", last)
	}
}

// firstRun waits for the run the paired owner's first message started and its "Working on
// it…", and returns the run and its conversation.
func (f *fixture) firstRun() (run, conv string) {
	f.t.Helper()
	pgtest.Eventually(f.t, "the run", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.runs) == 1 {
			run = f.runs[0]
		}
		return run != ""
	})
	pgtest.Eventually(f.t, "Working on it…", func() bool { return len(sentTexts(f.api.Calls("sendMessage"))) == 2 })
	convs, err := f.convs.List(context.Background(), "helper", 1)
	if err != nil || len(convs) == 0 {
		f.t.Fatalf("the conversation: %v", err)
	}
	return run, convs[0].ID
}
