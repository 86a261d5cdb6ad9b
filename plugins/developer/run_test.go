package developer

import (
	"context"
	"slices"
	"strings"
	"testing"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

func TestRunTierFollowsTheRunListAndTheMode(t *testing.T) {
	b := setup(t)
	tests := []struct {
		mode    runlist.Mode
		command string
		want    plugins.Tier
	}{
		{runlist.ModeRun, "echo hello", plugins.TierAuto},
		{runlist.ModeRun, "ls -l src", plugins.TierAuto},
		{runlist.ModeRun, "make -C /tmp", plugins.TierGated},
		{runlist.ModeRun, "npm install", plugins.TierGated},
		{runlist.ModeRun, "rm -rf .", plugins.TierGated},
		{runlist.ModeEdit, "echo hello", plugins.TierGated},
		{runlist.ModeAsk, "echo hello", plugins.TierGated},
	}
	for _, tt := range tests {
		b.setMode(t, tt.mode)
		c := call("run", args(t, map[string]any{"command": tt.command}))
		if got := b.tier(t, c); got != tt.want {
			t.Errorf("%s mode, %q: tier %s, want %s", tt.mode, tt.command, got, tt.want)
		}
	}
}

func TestRunCardNamesTheRule(t *testing.T) {
	b := setup(t)
	env := b.mustDescribe(t, call("run", args(t, map[string]any{"command": "make -C /tmp"})))
	if !strings.Contains(env.Preview, "Why a card:") || !strings.Contains(env.Preview, "-C") || !strings.Contains(env.Preview, "make") {
		t.Errorf("card = %q: want the program and the flag that decided", env.Preview)
	}
	if _, err := b.describe(t, call("run", args(t, map[string]any{"command": "ls", "cwd": "../outside"}))); err == nil {
		t.Error("a cwd outside the workspace was described, want a refusal")
	}
}

func TestRunExecutesWithoutAShellAndWithItsOwnEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://owner:hunter2@db/buddi")
	t.Setenv("BUDDI_VAULT_KEY", "do-not-leak")
	b := setup(t)
	shellish := call("run", args(t, map[string]any{"command": `echo $HOME "a  b" ;`}))
	out := b.mustRun(t, shellish, b.mustDescribe(t, shellish)) // gated ($ and ;): run with its card
	if !strings.Contains(out, `$HOME a  b ;`) {
		t.Errorf("output %q: want the words as typed (no shell)", out)
	}
	// env is not on the run list: it needs the approved card, and then shows the environment.
	envCall := call("run", args(t, map[string]any{"command": "env"}))
	b.mustFail(t, envCall, nil, "needs the owner's approval")
	approved := b.mustDescribe(t, envCall)
	out = b.mustRun(t, envCall, approved)
	for _, leak := range []string{"DATABASE_URL", "BUDDI_", "hunter2", "do-not-leak"} {
		if strings.Contains(out, leak) {
			t.Errorf("the command's environment holds %s:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "CI=1") {
		t.Errorf("environment lacks CI=1:\n%s", out)
	}
}

func TestRunReportsTheExitCode(t *testing.T) {
	b := setup(t)
	out := b.run(t, call("run", args(t, map[string]any{"command": "ls no-such-file"})), nil)
	if !out.Result.IsError || !strings.Contains(out.Result.Text, "exit 2") {
		t.Errorf("a failing command: %q, want its exit code reported as an error result", out.Result.Text)
	}
}

// The home's protected paths are never auto, even with the workspace at the home.
func TestRunNeverReadsProtectedHomePaths(t *testing.T) {
	b := setup(t)
	writeFile(t, b.home+"/.ssh/id_ed25519", "PRIVATE KEY\n")
	writeFile(t, b.home+"/src/x.txt", "x\n")
	b.setWorkspace(t, agent, b.home)
	for _, command := range []string{"cat .ssh/id_ed25519", "grep -r PRIVATE .ssh", "grep -r PRIVATE .", "ls .ssh"} {
		c := call("run", args(t, map[string]any{"command": command}))
		if got := b.tier(t, c); got == plugins.TierAuto {
			t.Errorf("%q with the workspace at the home: auto, want a card or a refusal", command)
		}
	}
	// Run from a directory that holds nothing protected, the run list applies as usual.
	if got := b.tier(t, call("run", args(t, map[string]any{"command": "cat x.txt", "cwd": "src"}))); got != plugins.TierAuto {
		t.Errorf("an unprotected file below the home: %s, want auto", got)
	}
}

// Seed 000 §3: a gated command's card offers "remember this, in this workspace"; approved with
// it, the command is remembered for the agent and the workspace and then runs without a card.
func TestRunCardRemembersTheCommand(t *testing.T) {
	b := setup(t)
	b.setMode(t, runlist.ModeEdit)
	c := call("run", args(t, map[string]any{"command": "echo hello"}))
	if got := b.tier(t, c); got != plugins.TierGated {
		t.Fatalf("echo in edit mode: %s, want gated", got)
	}
	approved := b.mustDescribe(t, c)
	if len(approved.Choices) != 1 || approved.Choices[0].Name != ChoiceRemember || approved.Choices[0].Default != RememberNo {
		t.Fatalf("card choices = %+v, want %q defaulting to %q", approved.Choices, ChoiceRemember, RememberNo)
	}
	// Approved without remembering: it still asks next time.
	b.mustRun(t, c, approved)
	if got := b.tier(t, c); got != plugins.TierGated {
		t.Fatalf("after a plain approval: %s, want gated", got)
	}
	c.Picks = map[string]string{ChoiceRemember: RememberExactly}
	if out := b.mustRun(t, c, approved); !strings.Contains(out, "remembered echo hello exactly") {
		t.Errorf("output %q: want it to say what was remembered", out)
	}
	c.Picks = nil
	if got := b.tier(t, c); got != plugins.TierAuto {
		t.Errorf("after remembering: %s, want auto", got)
	}
	if got := b.tier(t, call("run", args(t, map[string]any{"command": "echo other"}))); got != plugins.TierGated {
		t.Errorf("another argv after an exact remember: %s, want gated", got)
	}
	// By its beginning: the program and its subcommand.
	g := call("run", args(t, map[string]any{"command": "git status --short"}))
	env := b.mustDescribe(t, g)
	if !slices.Contains(env.Choices[0].Options, RememberBeginning) {
		t.Fatalf("options %v: want %q for a program with a subcommand", env.Choices[0].Options, RememberBeginning)
	}
	g.Picks = map[string]string{ChoiceRemember: RememberBeginning}
	b.run(t, g, env) // not a repository: it fails, and the answer is kept all the same
	if got := b.tier(t, call("run", args(t, map[string]any{"command": "git status"}))); got != plugins.TierAuto {
		t.Errorf("git status after remembering git status …: %s, want auto", got)
	}
	list, err := b.store.ListRemembered(context.Background(), agent)
	if err != nil || len(list) != 2 {
		t.Fatalf("remembered = %+v, %v: want two", list, err)
	}
	// Ask mode asks before every command: its card offers nothing to remember, and a pick
	// the card did not offer remembers nothing.
	b.setMode(t, runlist.ModeAsk)
	a := call("run", args(t, map[string]any{"command": "echo ask"}))
	askEnv := b.mustDescribe(t, a)
	if len(askEnv.Choices) != 0 {
		t.Errorf("ask mode card choices = %+v, want none", askEnv.Choices)
	}
	a.Picks = map[string]string{ChoiceRemember: RememberExactly}
	b.mustRun(t, a, askEnv)
	if list, _ := b.store.ListRemembered(context.Background(), agent); len(list) != 2 {
		t.Errorf("remembered after an ask-mode card = %d, want still 2", len(list))
	}
}
