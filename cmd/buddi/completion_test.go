package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

var missionsSubcommands = []string{"list", "add", "add-defaults", "run-now", "enable", "disable", "occurrences"}

func TestCompletions(t *testing.T) {
	t.Parallel()
	var c cli
	parser, err := kong.New(&c, kong.Name("buddi"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words []string
		want  []string // each must be offered
		not   []string // none may be
	}{
		{[]string{""}, []string{"init", "missions", "help", "completion"}, []string{"__complete", "list"}},
		{[]string{"mis"}, []string{"missions"}, []string{"init"}},
		{[]string{"missions", ""}, missionsSubcommands, []string{"missions"}},
		{[]string{"missions", "add", "--mi"}, []string{"--misfire"}, []string{"--agent"}},
		{[]string{"missions", "add", "--"}, []string{"--agent", "--cron", "--log-level", "--help"}, []string{"list"}},
		{[]string{"missions", "add", "--misfire", ""}, []string{"coalesce", "replay-all"}, []string{"--agent"}},
		{[]string{"missions", "add", "--agent", "x", ""}, nil, []string{"--agent", "x"}},
		{[]string{"--log-level", "=", "d"}, []string{"debug"}, []string{"info"}},
		{[]string{"--log-level=w"}, []string{"--log-level=warn"}, []string{"warn"}},
		{[]string{"--log-level", "warn", "mis"}, []string{"missions"}, nil},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}, nil},
		{[]string{"help", "missions", "a"}, []string{"add", "add-defaults"}, []string{"list"}},
		{[]string{"developer", "workspace", ""}, []string{"show", "set"}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, cand := range completions(parser.Model, tt.words) {
			got = append(got, cand.word)
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("complete %q: got %v, want %q among them", tt.words, got, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(got, w) {
				t.Errorf("complete %q: got %v, want no %q", tt.words, got, w)
			}
		}
	}
}

// completionScript writes `buddi completion SHELL` to a file and returns it, with a PATH
// that finds the test's buddi binary.
func completionScript(t *testing.T, shell string) (file, path string) {
	t.Helper()
	code, out, errOut := runHere("completion", shell)
	if code != 0 || out == "" {
		t.Fatalf("buddi completion %s: exit %d %s", shell, code, errOut)
	}
	file = filepath.Join(t.TempDir(), "buddi."+shell)
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH")
}

// shellOutput runs a shell's command line with PATH and returns its standard output.
func shellOutput(t *testing.T, path, shell string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, args...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %q: %v\n%s%s", shell, args, err, out, stderr)
	}
	return string(out)
}

// The bash script, sourced in bash, completes commands, subcommands, flags and their values.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	file, path := completionScript(t, "bash")
	reply := func(words ...string) []string {
		t.Helper()
		script := `source "$1"; shift; COMP_WORDS=(buddi "$@"); COMP_CWORD=$#; _buddi; printf '%s\n' "${COMPREPLY[@]}"`
		out := shellOutput(t, path, "bash", append([]string{"-c", script, "bash", file}, words...)...)
		return strings.Fields(out)
	}
	if got := reply("mis"); !slices.Equal(got, []string{"missions"}) {
		t.Errorf("buddi mis<TAB>: %v, want [missions]", got)
	}
	if got := reply("missions", ""); !slices.Equal(got, missionsSubcommands) {
		t.Errorf("buddi missions <TAB>: %v, want %v", got, missionsSubcommands)
	}
	if got := reply("missions", "add", "--mis"); !slices.Equal(got, []string{"--misfire"}) {
		t.Errorf("buddi missions add --mis<TAB>: %v, want [--misfire]", got)
	}
	if got := reply("--log-level", ""); !slices.Equal(got, []string{"debug", "info", "warn", "error"}) {
		t.Errorf("buddi --log-level <TAB>: %v", got)
	}
}

// The fish script completes in fish (when fish is installed).
func TestFishCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed: its completion script is not tried here")
	}
	file, path := completionScript(t, "fish")
	out := shellOutput(t, path, "fish", "-c", `source $argv[1]; complete -C"buddi mis"; complete -C"buddi missions "`, file)
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		word, _, _ := strings.Cut(line, "\t")
		words = append(words, word)
	}
	for _, want := range append([]string{"missions"}, missionsSubcommands...) {
		if !slices.Contains(words, want) {
			t.Errorf("fish offers %v, want %q among them", words, want)
		}
	}
}

// The zsh script completes in zsh (when zsh is installed). The completion system's own
// functions are stood in for, so the script's function runs without a terminal.
func TestZshCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed: its completion script is not tried here")
	}
	file, path := completionScript(t, "zsh")
	script := `compdef() { :; }
_describe() { local name=$argv[-1]; print -l -- ${(P)name} }
_files() { print files }
source $1
words=(buddi mis); CURRENT=2; _buddi
words=(buddi missions ''); CURRENT=3; _buddi`
	out := shellOutput(t, path, "zsh", "-c", script, "zsh", file)
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		word, _, _ := strings.Cut(line, ":")
		words = append(words, word)
	}
	for _, want := range append([]string{"missions"}, missionsSubcommands...) {
		if !slices.Contains(words, want) {
			t.Errorf("zsh offers %v, want %q among them", words, want)
		}
	}
}
