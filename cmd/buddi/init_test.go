package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"buddi/internal/pgtest"
	pt "buddi/runtime/providertest"
)

// initEnv is a fresh home for buddi init: no BUDDI_VAULT_KEY, the OS keychain off (so a
// developer's own keychain is never written; on CI there is none), the key file under a
// configuration directory of the test's own, and the scripted model server trusted.
func initEnv(t *testing.T, extra ...string) (model *pt.Server, home string, port int, vars []string, keyFile string) {
	t.Helper()
	model = pt.New(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, model.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(t.TempDir(), "config")
	home, port, vars = env(t, append([]string{"SSL_CERT_FILE=" + ca, "XDG_CONFIG_HOME=" + cfgDir, "BUDDI_KEYCHAIN=off"}, extra...)...)
	return model, home, port, vars, filepath.Join(cfgDir, "buddi", "vault.key")
}

// A new owner runs buddi init once, scripted, in a fresh home with no BUDDI_VAULT_KEY: it
// makes the vault key and keeps it in a 0600 key file, stores the API key, adds the account,
// assigns the shipped agents, and prints the model's answer. Then buddi serve, agents test
// and ask work with nothing exported; a second init changes nothing; a key file others can
// read locks the vault, saying the chmod.
func TestInitScripted(t *testing.T) {
	t.Parallel()
	model, home, port, vars, keyFile := initEnv(t)
	model.Script(pt.Text("OK"))
	start := time.Now()
	code, out, errOut := runWithInput(t, vars, pt.APIKey+"\n", "init", "--provider", "anthropic", "--base-url", model.URL, "--model", "model-one", "--key-stdin", "--yes")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("buddi init, from start to the model's first answer: %v", took.Round(time.Millisecond))
	for _, want := range []string{"vault key: created, kept in " + keyFile, "@buddi runs on anthropic with model-one", "@dev runs on anthropic with model-one", `It works: model-one answered "OK"`, "time zone: "} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, pt.APIKey) {
		t.Error("init printed the API key")
	}
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v; want mode 0600", keyFile, fi, err)
	}
	if raw, err := os.ReadFile(filepath.Join(home, "vault.json")); err != nil || strings.Contains(string(raw), pt.APIKey) {
		t.Fatalf("vault file: %v; the API key must be sealed", err)
	}

	// Nothing exported: agents test reads the key file too.
	model.Script(pt.Text("OK"))
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "test", "@dev"); code != 0 || !strings.Contains(out, "It works") {
		t.Fatalf("agents test: exit %d\n%s%s", code, out, errOut)
	}

	// A second init on a set-up home changes nothing: no account, no key stored.
	code, out, errOut = runWithInput(t, vars, "sk-other-key-0123456789\n", "init", "--provider", "openai", "--key-stdin", "--yes")
	if code != 0 || !strings.Contains(out, "set up already") || !strings.Contains(out, "Nothing changed") || !strings.Contains(out, "vault key: found in "+keyFile) {
		t.Fatalf("second init: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "accounts", "list", "--json"); code != 0 || strings.Contains(out, `"openai"`) {
		t.Fatalf("the second init changed the accounts: %s", out)
	}
	if code, _, _ := runBuddi(t, vars, time.Minute, "vault", "get", "OPENAI_API_KEY"); code != 1 {
		t.Fatalf("the second init stored a key: vault get exit %d", code)
	}

	// buddi serve finds the same key: ask answers with nothing exported.
	s := startServe(t, home, port, vars)
	s.health()
	model.Script(pt.Text("Hello from the scripted model."))
	if code, out, errOut := runBuddi(t, vars, time.Minute, "ask", "hello"); code != 0 || !strings.Contains(out, "Hello from the scripted model.") {
		t.Fatalf("ask: exit %d\n%s%s\n%s", code, out, errOut, s.log.String())
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve: exit %d", code)
	}

	// A key file others can read is refused, saying the chmod to run.
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "vault", "list"); code != 3 || !strings.Contains(errOut, "chmod 600 "+keyFile) {
		t.Errorf("vault list with a 0644 key file: exit %d\n%s%s", code, out, errOut)
	}
}

// Without a provider or a key, scripted init says the one step to take.
func TestInitSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	_, _, _, vars, _ := initEnv(t, "DATABASE_URL="+pgtest.DSN(t))
	for _, tt := range []struct {
		args  []string
		input string
		want  string
	}{
		{[]string{"init", "--yes"}, "", "give --provider"},
		{[]string{"init", "--provider", "openai-compatible", "--yes", "--key-stdin"}, "", "give --base-url"},
		{[]string{"init", "--provider", "openai-compatible", "--base-url", "http://127.0.0.1:1/v1", "--yes", "--key-stdin"}, "", "give --model"},
		{[]string{"init", "--provider", "anthropic", "--yes", "--key-stdin"}, "", "no API key"},
		{[]string{"init", "--provider", "anthropic", "--yes"}, "", "--key-stdin"},
	} {
		code, out, errOut := runWithInput(t, vars, tt.input, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, want 2 saying %q\n%s%s", tt.args, code, tt.want, out, errOut)
		}
	}
}

// On a terminal, init asks: the provider from a menu, the model with its default, and the
// API key without echo (the key never appears on the terminal).
func TestInitInteractive(t *testing.T) {
	t.Parallel()
	model, _, _, vars, keyFile := initEnv(t, "DATABASE_URL="+pgtest.DSN(t))
	model.Script(pt.Text("OK"))
	cmd := exec.Command(binary, "init", "--base-url", model.URL)
	cmd.Env = vars
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	screen := &lockedBuffer{}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(screen, tty) // ends with EIO when the process exits
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	answer := func(prompt, line string) {
		t.Helper()
		waitFor(t, "the prompt "+prompt, time.Minute, func() bool { return strings.Contains(screen.String(), prompt) })
		if _, err := tty.Write([]byte(line + "\r")); err != nil {
			t.Fatal(err)
		}
	}
	answer("Provider [1]: ", "1")
	answer("Model [claude-sonnet-4-5]: ", "model-one")
	answer("API key (not shown): ", pt.APIKey)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("init: %v\n%s", err, screen.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("init did not finish:\n%s", screen.String())
	}
	<-copied
	out := screen.String()
	if strings.Contains(out, pt.APIKey) {
		t.Errorf("the API key was echoed:\n%s", out)
	}
	if strings.Contains(out, "level=INFO") {
		t.Errorf("log lines reached the owner's terminal:\n%s", out)
	}
	for _, want := range []string{"1. Anthropic", "vault key: created, kept in " + keyFile, "@dev runs on anthropic with model-one", `It works: model-one answered "OK"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, out)
		}
	}
}
