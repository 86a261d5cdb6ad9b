package developer

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testKey is the installation's seal key in these tests.
var testKey, _ = seal.New([]byte("developer plugin tests' seal key!"))

// testNow is every test's clock.
var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// agent is the agent the tests call as.
const agent = "dev"

// testBundle is one database with the developer schema, a registry built from the
// manifest, and a workspace on disk:
//
//	ws/.gitignore               build/ and *.log
//	ws/a.txt                    "alpha\nbeta\n"
//	ws/notes.md                 two lines with "needle"
//	ws/src/main.go
//	ws/src/deep/x.txt           "needle deep"
//	ws/build/out.txt            ignored by .gitignore
//	ws/debug.log                ignored by .gitignore
//	ws/node_modules/pkg/i.js    always left out
//	ws/link-in        ->  src                      (a link pointing inside)
//	ws/link-out       ->  ../outside               (a link pointing outside)
//	ws/link-file-out  ->  <abs>/outside/secret.txt
//	outside/secret.txt          "needle secret"
//	home/                       the owner's home, empty
//	data/                       buddi's data directory
type testBundle struct {
	reg     *registry.Registry
	store   *Store
	deps    Deps
	base    string
	ws      string // the workspace, with links resolved
	outside string
	home    string
	data    string
}

// setup builds a bundle; each edit adjusts the dependencies before the manifest is built.
// The agent's workspace is ws, in the default mode.
func setup(t *testing.T, edits ...func(*Deps)) *testBundle {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{
		base:    base,
		ws:      filepath.Join(base, "ws"),
		outside: filepath.Join(base, "outside"),
		home:    filepath.Join(base, "home"),
		data:    filepath.Join(base, "data"),
	}
	mkdir(t, b.home)
	mkdir(t, b.data)
	writeFile(t, filepath.Join(b.ws, ".gitignore"), "build/\n*.log\n")
	writeFile(t, filepath.Join(b.ws, "a.txt"), "alpha\nbeta\n")
	writeFile(t, filepath.Join(b.ws, "notes.md"), "a needle here\nnone\nneedle again\n")
	writeFile(t, filepath.Join(b.ws, "src", "main.go"), "package main\n\nfunc main() {}\n")
	writeFile(t, filepath.Join(b.ws, "src", "deep", "x.txt"), "needle deep\n")
	writeFile(t, filepath.Join(b.ws, "build", "out.txt"), "needle built\n")
	writeFile(t, filepath.Join(b.ws, "debug.log"), "needle log\n")
	writeFile(t, filepath.Join(b.ws, "node_modules", "pkg", "i.js"), "needle module\n")
	writeFile(t, filepath.Join(b.outside, "secret.txt"), "needle secret\n")
	symlink(t, "src", filepath.Join(b.ws, "link-in"))
	symlink(t, "../outside", filepath.Join(b.ws, "link-out"))
	symlink(t, filepath.Join(b.outside, "secret.txt"), filepath.Join(b.ws, "link-file-out"))

	pool := pgtest.Pool(t)
	b.deps = Deps{Pool: pool, Home: b.home, DataDir: b.data, Now: func() time.Time { return testNow }, Seal: testKey}
	for _, e := range edits {
		e(&b.deps)
	}
	m := Manifest(b.deps)
	if _, err := migrations.Up(context.Background(), pool, nil, migrations.Set{Schema: m.Schema, FS: m.Migrations}); err != nil {
		t.Fatal(err)
	}
	if b.reg, err = registry.New(m); err != nil {
		t.Fatal(err)
	}
	b.store = NewStore(pool, b.deps.Seal, b.deps.Now)
	b.setWorkspace(t, agent, b.ws)
	return b
}

// noRipgrep is a Deps edit that makes ripgrep absent.
func noRipgrep(d *Deps) {
	d.LookPath = func(string) (string, error) { return "", errors.New("not found") }
}

// withoutRipgrep returns the bundle with a registry of its own whose search finds no
// ripgrep; the database and the files are shared.
func (b *testBundle) withoutRipgrep(t *testing.T) *testBundle {
	t.Helper()
	c := *b
	noRipgrep(&c.deps)
	reg, err := registry.New(Manifest(c.deps))
	if err != nil {
		t.Fatal(err)
	}
	c.reg = reg
	return &c
}

// engines returns the bundle with the built-in search and, when ripgrep is on PATH, the
// bundle with ripgrep.
func (b *testBundle) engines(t *testing.T) []*testBundle {
	t.Helper()
	out := []*testBundle{b.withoutRipgrep(t)}
	if _, err := exec.LookPath("rg"); err == nil {
		out = append(out, b)
	} else {
		t.Log("ripgrep is not on PATH: only the built-in search is tested (apt-get install ripgrep)")
	}
	return out
}

// setWorkspace records dir as who's workspace.
func (b *testBundle) setWorkspace(t *testing.T, who, dir string) {
	t.Helper()
	if _, err := b.store.SetWorkspace(context.Background(), who, dir, "owner:test", ""); err != nil {
		t.Fatal(err)
	}
}

// setMode sets the agent's mode.
func (b *testBundle) setMode(t *testing.T, mode runlist.Mode) {
	t.Helper()
	if err := b.store.SetMode(context.Background(), agent, mode); err != nil {
		t.Fatal(err)
	}
}

// call is a call of developer.<verb> by the agent inside a live owner request.
func call(verb, args string) plugins.Call {
	return plugins.Call{
		Tool:           Name + "." + verb,
		Args:           json.RawMessage(args),
		Agent:          agent,
		ConversationID: "conversation",
		RunID:          "run",
		Owner:          &plugins.OwnerRequest{Surface: "terminal", ExpiresAt: testNow.Add(time.Hour)},
		Granted:        true,
		Now:            testNow,
	}
}

// args renders tool arguments as JSON.
func args(t *testing.T, v map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// tier resolves c through the registry and returns the effective tier.
func (b *testBundle) tier(t *testing.T, c plugins.Call) plugins.Tier {
	t.Helper()
	res, err := b.reg.Resolve(context.Background(), c, testNow)
	if err != nil {
		t.Fatalf("Resolve %s %s: %v", c.Tool, c.Args, err)
	}
	if !res.SessionChecked {
		t.Errorf("Resolve %s: the session checks did not run", c.Tool)
	}
	return res.Tier
}

// describe renders c's envelope through the registry.
func (b *testBundle) describe(t *testing.T, c plugins.Call) (plugins.Envelope, error) {
	t.Helper()
	return b.reg.Describe(context.Background(), c)
}

// mustDescribe renders c's envelope and round-trips it through JSON, as the action row
// holds it.
func (b *testBundle) mustDescribe(t *testing.T, c plugins.Call) *plugins.Envelope {
	t.Helper()
	env, err := b.describe(t, c)
	if err != nil {
		t.Fatalf("Describe %s %s: %v", c.Tool, c.Args, err)
	}
	raw, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	var stored plugins.Envelope
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	return &stored
}

// run executes c through the registry.
func (b *testBundle) run(t *testing.T, c plugins.Call, approved *plugins.Envelope) registry.Outcome {
	t.Helper()
	return b.reg.Run(context.Background(), c, approved)
}

// mustRun executes c and fails the test unless it succeeded.
func (b *testBundle) mustRun(t *testing.T, c plugins.Call, approved *plugins.Envelope) string {
	t.Helper()
	out := b.run(t, c, approved)
	if out.Status != registry.StatusSucceeded {
		t.Fatalf("Run %s %s: %s: %s (%v)", c.Tool, c.Args, out.Status, out.Result.Text, out.Err)
	}
	return out.Result.Text
}

// mustFail executes c and fails the test unless it failed with a result naming want.
func (b *testBundle) mustFail(t *testing.T, c plugins.Call, approved *plugins.Envelope, want string) {
	t.Helper()
	out := b.run(t, c, approved)
	if out.Status != registry.StatusFailed || !out.Result.IsError {
		t.Fatalf("Run %s %s: got %s %q, want a failure", c.Tool, c.Args, out.Status, out.Result.Text)
	}
	if !strings.Contains(out.Result.Text, want) {
		t.Errorf("Run %s %s: got %q, want it to say %q", c.Tool, c.Args, out.Result.Text, want)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	mkdir(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("%s: got %v, want it absent", path, err)
	}
}
