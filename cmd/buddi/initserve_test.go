package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/internal/timezone"
	pt "buddi/runtime/providertest"
)

// buddi serve runs before buddi init, with no key anywhere: its vault is locked. init makes
// the key, and the running buddi opens its vault by itself (no restart): init's last line is
// the default agent's answer, asked through the running buddi. The zone given is saved.
func TestInitAsksTheRunningServer(t *testing.T) {
	t.Parallel()
	model, home, port, vars, _ := initEnv(t, "DATABASE_URL="+pgtest.DSN(t))
	s := startServe(t, home, port, vars)
	var first health.Report
	waitFor(t, "serve answering", 90*time.Second, func() bool {
		r, err := s.fetchHealth()
		first = r
		return err == nil
	})
	if first.Vault == nil || first.Vault.Open {
		t.Fatalf("a buddi started with no key anywhere has an open vault: %+v", first.Vault)
	}
	model.Script(pt.Text("OK"), pt.Text("Hello, I am buddi,", " at your service."))
	start := time.Now()
	code, out, errOut := runWithInput(t, vars, pt.APIKey+"\n", "init", "--provider", "anthropic", "--base-url", model.URL, "--model", "model-one", "--key-stdin", "--yes", "--tz", "Asia/Kathmandu")
	if code != 0 {
		t.Fatalf("init: exit %d\n%s%s\nserve:\n%s", code, out, errOut, s.log.String())
	}
	t.Logf("buddi init with buddi serve running, from start to the agent's first answer: %v", time.Since(start).Round(time.Millisecond))
	for _, want := range []string{"@buddi (through buddi serve): Hello, I am buddi, at your service.", "time zone: Asia/Kathmandu (from --tz), saved"} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output does not say %q:\n%s", want, out)
		}
	}
	if z := timezone.Owner(home); z.Name != "Asia/Kathmandu" || z.Source != timezone.FromSaved {
		t.Errorf("saved zone: %+v", z)
	}
	if r, err := s.fetchHealth(); err != nil || r.Vault == nil || !r.Vault.Open {
		t.Errorf("the running buddi's vault after init: %+v %v", r.Vault, err)
	}
	// A bad zone is refused, saying what a zone looks like; nothing else changes.
	if code, out, errOut := runWithInput(t, vars, "", "init", "--tz", "Mars/Olympus", "--yes"); code != 2 || !strings.Contains(errOut, "Europe/Berlin") {
		t.Errorf("init --tz Mars/Olympus: exit %d\n%s%s", code, out, errOut)
	}
}

// With --serve and no buddi running, init starts buddi serve in the background (its log in
// the home) and prints the agent's answer through it; the buddi it started keeps running
// after init has ended.
func TestInitStartsServe(t *testing.T) {
	t.Parallel()
	model, home, _, vars, _ := initEnv(t, "DATABASE_URL="+pgtest.DSN(t))
	model.Script(pt.Text("OK"), pt.Text("Ready when you are."))
	code, out, errOut := runWithInput(t, vars, pt.APIKey+"\n", "init", "--provider", "anthropic", "--base-url", model.URL, "--model", "model-one", "--key-stdin", "--yes", "--serve")
	t.Cleanup(func() { stopBackgroundServe(t, home) })
	if code != 0 {
		log, _ := os.ReadFile(filepath.Join(home, "serve.log"))
		t.Fatalf("init --serve: exit %d\n%s%s\nserve.log:\n%s", code, out, errOut, log)
	}
	for _, want := range []string{"buddi serve: starting in the background", "buddi serve: running at", "@buddi (through buddi serve): Ready when you are."} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output does not say %q:\n%s", want, out)
		}
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "list"); code != 0 {
		t.Errorf("the buddi init started does not answer after init ended: exit %d\n%s%s", code, out, errOut)
	}
}

// stopBackgroundServe stops the buddi serve holding home's lock (pid in the lock file) and
// waits until it has gone.
func stopBackgroundServe(t *testing.T, home string) {
	raw, err := os.ReadFile(filepath.Join(home, "buddi.lock"))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 1 || !processAlive(pid) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(60 * time.Second)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if processAlive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
