package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"buddi/internal/pgtest"
	"buddi/surfaces/webauth"
)

// runHere runs the command line in this process.
func runHere(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// `buddi` alone: a short summary that exits 0, says nothing runs, and names where to begin;
// it opens no database (the home is not even made).
func TestBareBuddiPrintsASummary(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("BUDDI_HOME", home)
	t.Setenv("BUDDI_WEB_PORT", strconv.Itoa(freeTestPort(t)))
	t.Setenv("DATABASE_URL", "")
	start := time.Now()
	code, out, errOut := runHere()
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("buddi: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if n := strings.Count(out, "\n"); n > 25 {
		t.Errorf("the summary has %d lines, want at most 25:\n%s", n, out)
	}
	for _, want := range []string{"personal agent platform", "not set up", "buddi init --serve", "buddi chat", "buddi dashboard", "buddi doctor", "buddi help"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary does not say %q:\n%s", want, out)
		}
	}
	if took > 3*time.Second {
		t.Errorf("the summary took %v", took)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the summary made the home %s (%v)", home, err)
	}

	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, out, _ = runHere(); !strings.Contains(out, "not running: start it with `buddi serve`") {
		t.Errorf("a home with no buddi running: the summary does not say how to start it:\n%s", out)
	}
}

// With a buddi serving, `buddi` alone says where it runs.
func TestBareBuddiSaysWhereBuddiRuns(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t, "DATABASE_URL="+pgtest.DSN(t))
	s := startServe(t, home, port, vars)
	waitFor(t, "buddi serve to answer /api/health", 90*time.Second, func() bool {
		_, err := s.fetchHealth()
		return err == nil
	})
	code, out, errOut := runBuddi(t, vars, 30*time.Second)
	if code != 0 {
		t.Fatalf("buddi: exit %d\n%s%s", code, out, errOut)
	}
	if want := "running at http://127.0.0.1:" + strconv.Itoa(port); !strings.Contains(out, want) {
		t.Errorf("the summary does not say %q:\n%s", want, out)
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	_, want, _ := runHere("version")
	for _, flag := range []string{"--version", "-v"} {
		code, out, errOut := runHere(flag)
		if code != 0 || out != want || !strings.HasPrefix(out, "buddi ") {
			t.Errorf("buddi %s: exit %d, %q %q; want 0 and %q", flag, code, out, errOut, want)
		}
	}
}

func TestHelpIsGrouped(t *testing.T) {
	t.Parallel()
	code, out, errOut := runHere("help")
	if code != 0 {
		t.Fatalf("buddi help: exit %d\n%s", code, errOut)
	}
	last := -1
	for _, g := range commandGroups {
		i := strings.Index(out, "\n"+g.title+"\n")
		if i < 0 || i < last {
			t.Errorf("buddi help: heading %q missing or out of order:\n%s", g.title, out)
		}
		last = i
	}
	if strings.Contains(out, "missions add") {
		t.Errorf("buddi help lists subcommands; want one line a command:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n > 100 {
		t.Errorf("buddi help has %d lines", n)
	}
}

func TestHelpOfOneCommand(t *testing.T) {
	t.Parallel()
	code, out, errOut := runHere("help", "missions")
	if code != 0 {
		t.Fatalf("buddi help missions: exit %d\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, "Usage: buddi missions <command>") {
		t.Errorf("buddi help missions explains another command:\n%s", out)
	}
	for _, sub := range []string{"list", "add", "add-defaults", "run-now", "enable", "disable", "occurrences"} {
		if !strings.Contains(out, "missions "+sub+" ") {
			t.Errorf("buddi help missions does not list %s:\n%s", sub, out)
		}
	}
	if _, out, _ := runHere("help", "missions", "add"); !strings.Contains(out, "--misfire") {
		t.Errorf("buddi help missions add does not show its flags:\n%s", out)
	}
	code, out, errOut = runHere("help", "nosuch")
	if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "buddi help") {
		t.Errorf("buddi help nosuch: exit %d, %q %q; want 2 and one sentence", code, out, errOut)
	}
}

func TestUnknownCommandIsOneSentence(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"nosuch"}, {"mision"}, {"--no-such-flag"}} {
		code, out, errOut := runHere(args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "run `buddi help`") {
			t.Errorf("buddi %v: exit %d, %q %q; want 2 and one sentence", args, code, out, errOut)
		}
	}
	if _, _, errOut := runHere("mision"); !strings.Contains(errOut, `did you mean "missions"`) {
		t.Errorf("buddi mision: %q; want a suggestion", errOut)
	}
}

// Every command is under a heading of its own choosing, not left to the last one.
func TestEveryCommandIsGrouped(t *testing.T) {
	t.Parallel()
	parser, err := kong.New(&cli{}, kong.Name("buddi"))
	if err != nil {
		t.Fatal(err)
	}
	grouped := map[string]bool{}
	for _, g := range commandGroups {
		for _, name := range g.commands {
			grouped[name] = true
		}
	}
	for _, n := range parser.Model.Children {
		if !n.Hidden && !grouped[n.Name] {
			t.Errorf("command %q is in no group of commandGroups (summary.go)", n.Name)
		}
	}
}

// A command that works only through the running buddi says so in one sentence when none
// runs, and starts no PostgreSQL to find out.
func TestServerCommandsWithoutAServer(t *testing.T) {
	t.Parallel()
	const sentence = "buddi is not running: start it with `buddi serve` (or `buddi service install`)\n"
	home, _, vars := env(t)
	check := func(args ...string) {
		t.Helper()
		code, out, errOut := runBuddi(t, vars, 30*time.Second, args...)
		if code != 3 || out != "" || errOut != sentence {
			t.Errorf("buddi %v: exit %d, %q %q; want 3 and %q", args, code, out, errOut, sentence)
		}
		if _, err := os.Stat(filepath.Join(home, "pg")); !os.IsNotExist(err) {
			t.Errorf("buddi %v made a database cluster in the home (%v)", args, err)
		}
		if ps := processesUnder(home); len(ps) > 0 {
			t.Errorf("buddi %v left processes: %v", args, ps)
		}
	}
	// A home never served.
	check("ask", "hi")
	check("chat")
	check("mcp")
	// A home whose buddi has stopped: its token is there, nothing answers.
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := webauth.CLIToken(home); err != nil {
		t.Fatal(err)
	}
	check("ask", "hi")
	check("chat", "--last")
}
