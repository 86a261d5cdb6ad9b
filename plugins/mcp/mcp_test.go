package mcp_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"buddi/actors"
	"buddi/actors/actorstest"
	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/mcp"
)

// server is the test MCP server, built once from testdata/server.
var server string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-server-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server = filepath.Join(dir, "server")
	build := exec.Command("go", "build", "-o", server, "./testdata/server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the test server:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// manifest makes echo auto (it only reads) and note gated (it writes a file).
var manifest = &mcp.Manifest{Version: "1.2.3-test", Description: "The tests' server.",
	Tools: map[string]mcp.ToolPolicy{
		"echo": {Tier: plugins.TierAuto, Effects: []plugins.Effect{plugins.EffectRead}},
		"note": {Tier: plugins.TierGated, Effects: []plugins.Effect{plugins.EffectFSWrite}},
	},
	Network: []string{"nowhere: nothing"}}

// installed inspects the test server as `buddi plugins add` does and returns its record.
func installed(t *testing.T, m *mcp.Manifest, env ...string) mcp.Plugin {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := mcp.Plugin{Name: "testy", Command: []string{server}, Env: env}
	srv, ver, listed, err := mcp.Inspect(ctx, p, mcp.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if srv != "testserver" || ver != "1.2.3" {
		t.Fatalf("server %q %q", srv, ver)
	}
	return mcp.Build(p, srv, ver, listed, m, "buddi-plugin.json", nil, time.Now())
}

// told records the sentences a host tells the owner.
type told struct {
	mu    sync.Mutex
	lines []string
}

func (t *told) tell(_ context.Context, plugin, title, sentence string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, plugin+": "+title+": "+sentence)
}

func (t *told) all() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// serving starts a host for plugins under a fresh root, with a registry over its manifests.
func serving(t *testing.T, budget actors.Budget, ps ...mcp.Plugin) (*mcp.Host, *registry.Registry, *told) {
	t.Helper()
	tl := &told{}
	h := mcp.NewHost(mcp.Record{Plugins: ps}, mcp.HostOptions{Tell: tl.tell, Budget: budget, WaitReady: 20 * time.Second})
	reg, err := registry.New(h.Manifests()...)
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystem(nil, nil)
	root, err := sys.NewSupervisor(nil, "root", actors.Strategy{Kind: actors.OneForOne, Budget: actors.Budget{MaxRestarts: 1, Within: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(sys, root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return h, reg, tl
}

func status(h *mcp.Host, name string) mcp.Status {
	for _, s := range h.Statuses() {
		if s.Name == name {
			return s
		}
	}
	return mcp.Status{}
}

func call(tool, args string) plugins.Call {
	return plugins.Call{Tool: tool, Args: []byte(args), Agent: "tester", RunID: "run", Granted: true, Now: time.Now()}
}

// The record holds the tools with their tiers (auto first), the sanitised names and the
// schema hashes; a server without a manifest gets every tool gated; the contribution says so.
func TestBuildAndContribution(t *testing.T) {
	p := installed(t, manifest)
	if p.Version != "1.2.3-test" || p.Server != "testserver" {
		t.Fatalf("version %q server %q", p.Version, p.Server)
	}
	if p.Tools[0].Name != "testy.echo" || p.Tools[0].Tier != plugins.TierAuto {
		t.Fatalf("the auto tool is not first: %+v", p.Tools[0])
	}
	weird, ok := p.Tool("Weird-Name.v2")
	if !ok || weird.Name != "testy.weird_name_v2" || weird.Tier != plugins.TierGated || weird.TierFrom != "default" {
		t.Fatalf("the sanitised tool: %+v %v", weird, ok)
	}
	if echo, _ := p.Tool("echo"); echo.SchemaHash != mcp.SchemaHash(echo.Schema) || echo.SchemaHash == "" {
		t.Fatalf("echo's schema hash: %+v", echo)
	}
	text := mcp.Contribution(p)
	for _, want := range []string{"5 tools: 1 auto (they run the first time a model calls them", "4 gated", "testy.echo  [auto; read]",
		"arguments: text (string, required)", "the server's \"Weird-Name.v2\"", "nowhere: nothing", "outside any sandbox"} {
		if !strings.Contains(text, want) {
			t.Errorf("the contribution lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "testy.echo") > strings.Index(text, "testy.note") {
		t.Errorf("the auto tool is not listed first:\n%s", text)
	}

	bare := installed(t, nil)
	for _, tl := range bare.Tools {
		if tl.Tier != plugins.TierGated || tl.TierFrom != "default" {
			t.Fatalf("without a manifest %s is %s", tl.Name, tl.Tier)
		}
	}
	if text := mcp.Contribution(bare); !strings.Contains(text, "0 auto (none runs without asking you)") || !strings.Contains(text, "buddi plugins tier testy TOOL auto|gated") {
		t.Fatalf("the contribution without a manifest:\n%s", text)
	}
	rec := mcp.Record{Plugins: []mcp.Plugin{bare}}
	if _, err := rec.SetTier("testy", "echo", plugins.TierAuto); err != nil {
		t.Fatal(err)
	}
	if got, _ := rec.Plugins[0].Tool("echo"); got.Tier != plugins.TierAuto || got.TierFrom != "owner" {
		t.Fatalf("the owner's tier: %+v", got)
	}
	if _, err := rec.SetTier("testy", "echo", plugins.TierSession); err == nil {
		t.Fatal("a session tier was taken for a plugin's tool")
	}
}

// Served: the auto tool runs, the gated one is gated and runs once approved, a tool error is
// a tool-error, and the sanitised name reaches the server's own.
func TestServedToolsGoThroughTheRegistry(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes.txt")
	p := installed(t, manifest, "NOTES="+notes)
	_, reg, _ := serving(t, mcp.Budget, p)
	ctx := context.Background()

	res, err := reg.Resolve(ctx, call("testy.echo", `{"text":"hi"}`), time.Now())
	if err != nil || res.Tier != plugins.TierAuto {
		t.Fatalf("echo resolves %v %v", res.Tier, err)
	}
	out := reg.Run(ctx, call("testy.echo", `{"text":"hi"}`), nil)
	if out.Status != registry.StatusSucceeded || out.Result.Text != "echo: hi" {
		t.Fatalf("echo: %+v", out)
	}

	res, err = reg.Resolve(ctx, call("testy.note", `{"note":"buy milk"}`), time.Now())
	if err != nil || res.Tier != plugins.TierGated {
		t.Fatalf("note resolves %v %v", res.Tier, err)
	}
	env, err := reg.Describe(ctx, call("testy.note", `{"note":"buy milk"}`))
	if err != nil || !strings.Contains(env.Preview, "buy milk") || env.Detail["tool"] != "note" {
		t.Fatalf("note's envelope: %+v %v", env, err)
	}
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("describing the gated call wrote the file")
	}
	out = reg.Run(ctx, call("testy.note", `{"note":"buy milk"}`), &env)
	if out.Status != registry.StatusSucceeded {
		t.Fatalf("the approved note: %+v", out)
	}
	if b, _ := os.ReadFile(notes); string(b) != "buy milk\n" {
		t.Fatalf("the notes file: %q", b)
	}

	out = reg.Run(ctx, call("testy.fail", `{}`), nil)
	if out.Status != registry.StatusFailed || !out.Result.IsError || !strings.Contains(out.Result.Text, "it failed on purpose") {
		t.Fatalf("a tool error: %+v", out)
	}
	out = reg.Run(ctx, call("testy.weird_name_v2", `{}`), nil)
	if out.Status != registry.StatusSucceeded || out.Result.Text != "weird" {
		t.Fatalf("the sanitised tool: %+v", out)
	}
	if out := reg.Run(ctx, call("testy.echo", `{"text":3}`), nil); out.Status != registry.StatusFailed {
		t.Fatalf("arguments against the schema: %+v", out)
	}
}

// A server whose tools changed since they were accepted: the changed and the removed tools
// refuse with a sentence naming the upgrade; the unchanged ones work; the owner is told.
func TestChangedToolsAreOffUntilAccepted(t *testing.T) {
	p := installed(t, manifest)
	p.Env = []string{"TEST_VARIANT=changed"}
	h, reg, tl := serving(t, mcp.Budget, p)
	ctx := context.Background()
	actorstest.Eventually(t, "the plugin to run", func() bool { return status(h, "testy").State == "running" })
	st := status(h, "testy")
	if len(st.Disabled) != 2 || st.Disabled["echo"] == "" || st.Disabled["note"] == "" {
		t.Fatalf("disabled: %v", st.Disabled)
	}
	_, err := reg.Describe(ctx, call("testy.echo", `{"text":"hi"}`))
	if err == nil || !strings.Contains(err.Error(), "buddi plugins add testy --upgrade --yes") || !strings.Contains(err.Error(), "arguments changed") {
		t.Fatalf("echo with a changed schema: %v", err)
	}
	if out := reg.Run(ctx, call("testy.note", `{"note":"x"}`), nil); out.Status != registry.StatusFailed || !strings.Contains(out.Result.Text, "no longer listed") {
		t.Fatalf("a removed tool: %+v", out)
	}
	if out := reg.Run(ctx, call("testy.weird_name_v2", `{}`), nil); out.Status != registry.StatusSucceeded {
		t.Fatalf("an unchanged tool: %+v", out)
	}
	actorstest.Eventually(t, "the owner to be told", func() bool { return strings.Contains(tl.all(), "extra is new") })

	listed := []mcp.Listed{}
	for _, tool := range p.Tools {
		listed = append(listed, mcp.Listed{Name: tool.MCPName, SchemaHash: tool.SchemaHash})
	}
	if d := mcp.Diff(p.Tools, listed); len(d) != 0 {
		t.Fatalf("no change diffs as %v", d)
	}
}

// A server that exits is started again by its supervisor and a later call works; one that
// keeps exiting is stopped, the owner told one sentence, and its tools refuse with it.
func TestCrashRestartAndGiveUp(t *testing.T) {
	p := installed(t, manifest)
	h, reg, _ := serving(t, mcp.Budget, p)
	ctx := context.Background()
	actorstest.Eventually(t, "the plugin to run", func() bool { return status(h, "testy").State == "running" })
	first := status(h, "testy").Pid
	if out := reg.Run(ctx, call("testy.crash", `{}`), nil); out.Status == registry.StatusSucceeded {
		t.Fatalf("a crash succeeded: %+v", out)
	}
	actorstest.Eventually(t, "the plugin to be started again", func() bool {
		s := status(h, "testy")
		return s.State == "running" && s.Restarts == 1 && s.Pid != first
	})
	if out := reg.Run(ctx, call("testy.echo", `{"text":"again"}`), nil); out.Result.Text != "echo: again" {
		t.Fatalf("after the restart: %+v", out)
	}

	bad := p
	bad.Name = "broken"
	for i := range bad.Tools {
		bad.Tools[i].Name = "broken." + strings.TrimPrefix(bad.Tools[i].Name, "testy.")
	}
	bad.Env = []string{"TEST_EXIT_AT_START=1"}
	h2, reg2, tl := serving(t, actors.Budget{MaxRestarts: 2, Within: time.Minute, Backoff: 10 * time.Millisecond}, bad)
	actorstest.Eventually(t, "the plugin to be given up", func() bool { return status(h2, "broken").State == "stopped" })
	s := status(h2, "broken")
	if !strings.Contains(s.Sentence, "Plugin broken kept stopping") || !strings.Contains(s.Sentence, "started again 2 times within 1m0s") {
		t.Fatalf("the sentence: %q", s.Sentence)
	}
	_, err := reg2.Describe(ctx, call("broken.echo", `{"text":"hi"}`))
	if err == nil || !strings.Contains(err.Error(), s.Sentence) {
		t.Fatalf("a stopped plugin's tool: %v", err)
	}
	if out := reg2.Run(ctx, call("broken.echo", `{"text":"hi"}`), nil); !strings.Contains(out.Result.Text, "kept stopping") {
		t.Fatalf("a stopped plugin's approved call: %+v", out)
	}
	actorstest.Eventually(t, "the owner to be told", func() bool { return strings.Contains(tl.all(), s.Sentence) })
}

// Outside buddi serve the tools exist (a grant resolves) and refuse to run.
func TestNotServingRefuses(t *testing.T) {
	p := installed(t, manifest)
	h := mcp.NewHost(mcp.Record{Plugins: []mcp.Plugin{p}}, mcp.HostOptions{})
	reg, err := registry.New(h.Manifests()...)
	if err != nil {
		t.Fatal(err)
	}
	if out := reg.Run(context.Background(), call("testy.echo", `{"text":"hi"}`), nil); !strings.Contains(out.Result.Text, "runs only inside buddi serve") {
		t.Fatalf("%+v", out)
	}
}

// A URL plugin must be on loopback.
func TestCheckURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080/mcp", true},
		{"http://[::1]:8080/mcp", true},
		{"http://localhost:9/mcp", true},
		{"https://example.com/mcp", false},
		{"http://10.0.0.2/mcp", false},
		{"ftp://127.0.0.1/mcp", false},
	}
	for _, tt := range tests {
		if err := mcp.CheckURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q) = %v, want ok %v", tt.url, err, tt.ok)
		}
	}
}

// Verbs fit the registry.
func TestVerb(t *testing.T) {
	tests := []struct{ in, want string }{
		{"read_graph", "read_graph"},
		{"Weird-Name.v2", "weird_name_v2"},
		{"9lives", "t_9lives"},
	}
	for _, tt := range tests {
		if got := mcp.Verb(tt.in); got != tt.want {
			t.Errorf("Verb(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := mcp.Verb(strings.Repeat("a", 40)); len(got) != 32 {
		t.Errorf("a long name: %q", got)
	}
}
