package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"buddi/actors"
	"buddi/agents"
	"buddi/core/action"
	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
	"buddi/core/netguard"
	"buddi/core/redact"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/core/vault"
	"buddi/db"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
	"buddi/plugins/web"
	"buddi/queue"
	"buddi/runtime/account"
	"buddi/runtime/live"
	"buddi/runtime/provider"
	"buddi/runtime/providertest"
	"buddi/runtime/run"
	"buddi/runtime/transport"
	"buddi/supervisor"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Planted is a stored secret a tool leaks into its result.
const planted = "hunter2-correct-horse-battery"

// effectTool is a real tool with a counted effect.
type effectTool struct {
	spec plugins.Spec
	runs atomic.Int64
	text string
	last atomic.Pointer[plugins.Call] // the last call executed
}

func (t *effectTool) Spec() plugins.Spec { return t.spec }
func (t *effectTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: "note " + string(call.Args), Effects: t.spec.Effects, Preview: "writes a note"}, nil
}
func (t *effectTool) Execute(_ context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	t.last.Store(&call)
	n := t.runs.Add(1)
	text := t.text
	if text == "" {
		text = "noted (" + string(rune('0'+n)) + ")"
	}
	return plugins.Result{Text: text}, nil
}

var argsSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)

type harness struct {
	t        testing.TB
	pool     *pgxpool.Pool
	model    *providertest.Server
	convs    *conversation.Store
	runner   *run.Runner
	hub      *live.Hub
	gated    *effectTool // test.note: gated
	auto     *effectTool // test.count: auto
	peek     *effectTool // test.peek: auto, leaks the planted secret
	hidden   *effectTool // test.hidden: auto, in the registry but not in the agent's grant
	binary   *effectTool // test.binary: auto, answers with a NUL byte in its text
	vault    *vault.Memory
	tools    *registry.Registry
	insert   executor.Inserter
	logs     *syncBuffer
	accounts *account.Store
	q        *queue.Queue
	qpool    *pgxpool.Pool
	register func(w *river.Workers) error
	host     *supervisor.ConversationHost
	panics   atomic.Int32           // the run's code (its agent catalog) panics this many more times
	page     atomic.Pointer[string] // what the page at http://page.example/ serves (web.read)
	pageHits atomic.Int64           // the requests it answered
	search   *searchRecorder        // the runner's NativeSearch: off until a test turns it on
}

// searchRecorder is a run.NativeSearch that records the searches it is told of.
type searchRecorder struct {
	native atomic.Bool
	mu     sync.Mutex
	got    []provider.Search
	agents []string
}

func (s *searchRecorder) Native() bool { return s.native.Load() }

func (s *searchRecorder) Record(_ context.Context, agent, _, _ string, found provider.Search) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got, s.agents = append(s.got, found), append(s.agents, agent)
	return nil
}

func (s *searchRecorder) searches() []provider.Search {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provider.Search(nil), s.got...)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newHarness(t testing.TB, wire provider.Wire, extra ...func(*river.Workers)) *harness {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	pool, err := db.Open(ctx, dsn, db.Options{Name: "app", MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	qpool, err := db.Open(ctx, dsn, db.Options{Name: "queue", MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(qpool.Close)
	h := &harness{t: t, pool: pool, qpool: qpool, search: &searchRecorder{}, model: providertest.New(t), convs: conversation.NewStore(pool), hub: live.NewHub(), logs: &syncBuffer{}}
	h.gated = &effectTool{spec: plugins.Spec{Name: "test.note", Description: "Write a note.", Schema: argsSchema, Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierGated}}
	h.auto = &effectTool{spec: plugins.Spec{Name: "test.count", Description: "Count once.", Schema: argsSchema, Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierAuto}}
	h.peek = &effectTool{spec: plugins.Spec{Name: "test.peek", Description: "Read a config file.", Schema: argsSchema, Effects: []plugins.Effect{plugins.EffectRead}, Tier: plugins.TierAuto},
		text: "db_password=" + planted + "\nport=5432"}
	h.hidden = &effectTool{spec: plugins.Spec{Name: "test.hidden", Description: "Not yours.", Schema: argsSchema, Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierAuto}}
	h.binary = &effectTool{spec: plugins.Spec{Name: "test.binary", Description: "Read a binary file.", Schema: argsSchema, Effects: []plugins.Effect{plugins.EffectRead}, Tier: plugins.TierAuto},
		text: "ELF\x00\x01 header, then " + planted + "\x00 in the data"}
	if _, err := migrations.Up(ctx, pool, nil, migrations.Set{Schema: web.Schema, FS: web.Migrations()}); err != nil {
		t.Fatal(err)
	}
	h.tools, err = registry.New(run.Manifest(pool), plugins.Manifest{Name: "test", Version: "1", Tools: []plugins.Tool{h.gated, h.auto, h.peek, h.hidden, h.binary}},
		web.Manifest(web.Deps{Pool: pool, Guard: h.pageGuard()}))
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	agentFile := "---\nid: tester\nhandle: \"@tester\"\nname: Tester\ndefault: true\ntools: [conversation.ask, test.note, test.count, test.peek, test.binary, web.read, web.search]\n---\nYou test things.\n"
	if err := os.WriteFile(filepath.Join(dir, "tester.md"), []byte(agentFile), 0o600); err != nil {
		t.Fatal(err)
	}
	catalog := func() (*agents.Catalog, error) {
		if h.panics.Add(-1) >= 0 {
			panic("the agent catalog broke")
		}
		return agents.Load(agents.Config{AgentsDir: dir})
	}

	secrets := vault.NewMemory(map[string]string{"MODEL_KEY": providertest.APIKey, "PLANTED": planted})
	h.vault = secrets
	scrub := redact.NewLive(secrets)
	if err := scrub.Reload(); err != nil {
		t.Fatal(err)
	}
	h.convs.Scrub, h.hub.Scrub = scrub, scrub // as buddi serve wires them
	log := slog.New(redact.NewHandler(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}), scrub))

	h.accounts = account.NewStore(pool, testKey)
	acct := account.Account{Name: "scripted", Wire: wire, Kind: provider.CredentialAPIKey, SecretName: "MODEL_KEY", Enabled: true}
	if wire == provider.WireOpenAI {
		acct.BaseURL = h.model.OpenAIBaseURL()
	}
	if _, err := h.accounts.Add(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if _, err := h.accounts.Assign(ctx, "tester", "scripted", "model-one"); err != nil {
		t.Fatal(err)
	}

	h.insert, err = queue.InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	exec := executor.New(pool, h.tools, run.JobQueue{Inserter: h.insert}, log)
	exec.Scrub = scrub
	exec.Seal = testKey

	sys := actors.NewSystem(log, nil)
	tree, err := supervisor.Build(sys, supervisor.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx)
	})
	h.runner = &run.Runner{Pool: pool, Conversations: h.convs, Executor: exec, Tools: h.tools, Catalog: catalog,
		Accounts: h.accounts, Secrets: secrets, Scrub: scrub, Transport: h.transport(), Insert: h.insert,
		Host: h.hostFor(sys, tree), Live: h.hub, Log: log, Search: h.search,
		Delay: func(time.Duration) time.Duration { return 50 * time.Millisecond }}
	h.register = func(w *river.Workers) error {
		river.AddWorker(w, &run.StartWorker{Runner: h.runner})
		river.AddWorker(w, &run.ResumeWorker{Runner: h.runner})
		river.AddWorker(w, &executor.Worker{Executor: exec})
		for _, add := range extra {
			add(w)
		}
		return nil
	}
	h.startQueue()
	return h
}

// pageGuard is the web plugin's address guard with its hooks: page.example resolves to a
// public address, and the dial of that approved address reaches a loopback server that
// serves h.page. Every other name is refused or fails as it would offline.
func (h *harness) pageGuard() *netguard.Guard {
	h.t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.pageHits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if p := h.page.Load(); p != nil {
			_, _ = io.WriteString(w, *p)
		}
	}))
	h.t.Cleanup(ts.Close)
	public := netip.MustParseAddr("93.184.216.34")
	return &netguard.Guard{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "page.example" {
				return []netip.Addr{public}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != "93.184.216.34:80" {
				return nil, fmt.Errorf("the test dials only the approved address, not %s", addr)
			}
			return (&net.Dialer{}).DialContext(ctx, network, ts.Listener.Addr().String())
		},
	}
}

// transport trusts the scripted server and sends every provider's host name to it, but
// dials a loopback address as it is: a test's own server there (one that records whether a
// key reached it) is reached for what it is.
func (h *harness) transport() transport.Config {
	tc := h.model.TransportConfig()
	toModel := tc.DialContext
	tc.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && host == "127.0.0.1" {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
		return toModel(ctx, network, addr)
	}
	return tc
}

func (h *harness) hostFor(sys *actors.System, tree *supervisor.Tree) *supervisor.ConversationHost {
	h.host = supervisor.NewConversationHost(sys, tree)
	return h.host
}

// startQueue starts a River client working the harness's jobs; the test's end stops it.
func (h *harness) startQueue() {
	h.t.Helper()
	q, err := queue.New(h.qpool, queue.Options{Log: slog.New(slog.DiscardHandler), Register: h.register, Queues: map[string]int{run.Queue: 50}})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.q = q
	h.t.Cleanup(func() { h.stopQueue() })
}

// stopQueue stops the client at once, cancelling what runs (a lost lease, or a stop).
func (h *harness) stopQueue() {
	if h.q == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = h.q.Client().StopAndCancel(ctx)
	h.q = nil
}

// send writes as the owner on the terminal and returns what became of it.
func (h *harness) send(text string) conversation.Sent {
	h.t.Helper()
	sent, err := h.convs.Send(context.Background(), conversation.Message{Agent: "tester", Surface: "terminal", Text: text},
		h.runner.StartNext(run.Meta{Surface: "terminal", Interactive: true}))
	if err != nil {
		h.t.Fatal(err)
	}
	return sent
}

// events returns the events of kind whose payload names run.
func (h *harness) events(kind events.Kind, runID string) []eventlog.Event {
	h.t.Helper()
	evs, err := eventlog.List(context.Background(), h.pool, eventlog.Filter{Kind: string(kind), Limit: 1000})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []eventlog.Event
	for _, ev := range evs {
		var p struct {
			RunID string `json:"run_id"`
		}
		_ = json.Unmarshal(ev.Payload, &p)
		if runID == "" || p.RunID == runID {
			out = append(out, ev)
		}
	}
	return out
}

func (h *harness) await(kind events.Kind, runID string) eventlog.Event {
	h.t.Helper()
	var got []eventlog.Event
	pgtest.Eventually(h.t, string(kind)+" of run "+runID, func() bool {
		got = h.events(kind, runID)
		return len(got) > 0
	})
	return got[0]
}

// pendingAction returns the pending action of run.
func (h *harness) pendingAction(runID string) action.Record {
	h.t.Helper()
	recs, err := action.List(context.Background(), h.pool, action.Filter{States: []action.State{action.Pending}})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, r := range recs {
		if r.RunID == runID {
			return r
		}
	}
	h.t.Fatalf("no pending action of run %s", runID)
	return action.Record{}
}

func (h *harness) transcript(conv string) []conversation.Entry {
	h.t.Helper()
	es, err := h.convs.Transcript(context.Background(), conv)
	if err != nil {
		h.t.Fatal(err)
	}
	return es
}

func wire(name string) string { return provider.WireToolName(name) }

// testKey is the installation's seal key of these tests.
var testKey, _ = seal.New(bytes.Repeat([]byte{4}, 32))
