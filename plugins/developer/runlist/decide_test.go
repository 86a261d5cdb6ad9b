package runlist

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAllowances(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		cwd string
		decisionCase
	}{
		// An install that only reproduces the lockfile.
		{"npm", decisionCase{"npm ci", A, RuleLockfileInstall, ""}},
		{"npm", decisionCase{"npm install", A, RuleLockfileInstall, ""}},
		{"npm", decisionCase{"npm ci --ignore-scripts --offline", A, RuleLockfileInstall, ""}},
		{"shrink", decisionCase{"npm ci", A, RuleLockfileInstall, ""}},
		{"pnpm", decisionCase{"pnpm install", A, RuleLockfileInstall, ""}},
		{"pnpm", decisionCase{"pnpm install --frozen-lockfile", A, RuleLockfileInstall, ""}},
		{"yarn", decisionCase{"yarn", A, RuleLockfileInstall, ""}},
		{"yarn", decisionCase{"yarn install", A, RuleLockfileInstall, ""}},
		{"yarn", decisionCase{"yarn --immutable", A, RuleLockfileInstall, ""}},
		{"yarn", decisionCase{"yarn install --immutable", A, RuleLockfileInstall, ""}},
		{"bun", decisionCase{"bun install", A, RuleLockfileInstall, ""}},
		{"bun2", decisionCase{"bun install --frozen-lockfile", A, RuleLockfileInstall, ""}},
		{"nolock", decisionCase{"npm ci", G, RuleLockfile, ""}},
		{"", decisionCase{"npm install", G, RuleLockfile, ""}},
		{"npm/sub", decisionCase{"npm ci", G, RuleLockfile, ""}},
		{"pkg", decisionCase{"pnpm install", G, RuleLockfile, ""}},
		{"npm", decisionCase{"pnpm install", G, RuleLockfile, ""}},
		{"yarn", decisionCase{"npm install", G, RuleLockfile, ""}},
		{"npm", decisionCase{"npm install lodash", G, RuleInstallPackage, ""}},
		{"npm", decisionCase{"npm ci lodash", G, RuleInstallPackage, ""}},
		{"yarn", decisionCase{"yarn add lodash", G, RuleSubcommand, ""}},
		{"npm", decisionCase{"npm i", G, RuleSubcommand, ""}},
		{"npm", decisionCase{"npm install --save-dev", G, RuleInstallFlag, "--save-dev"}},
		{"npm", decisionCase{"npm install --ignore-scripts=false", G, RuleInstallFlag, "--ignore-scripts"}},
		{"npm", decisionCase{"npm install --immutable", G, RuleInstallFlag, "--immutable"}},
		{"pnpm", decisionCase{"pnpm install --no-frozen-lockfile", G, RuleInstallFlag, "--no-frozen-lockfile"}},
		{"yarn", decisionCase{"yarn --registry=http://x", G, RuleInstallFlag, "--registry"}},
		{"npm", decisionCase{"npm ci -- x", G, RuleInstallFlag, "--"}},
		// npx of the project's own binary.
		{"", decisionCase{"npx vite build", A, RuleLocalNpx, ""}},
		{"app/src", decisionCase{"npx vite build --mode production", A, RuleLocalNpx, ""}},
		{"", decisionCase{"npx vite src/main.ts", A, RuleLocalNpx, ""}},
		{"", decisionCase{"npx outside", G, RuleNpxMissing, ""}},
		{"app", decisionCase{"npx tool", G, RuleNpxMissing, ""}},
		{"sibling", decisionCase{"npx tool", A, RuleLocalNpx, ""}},
		{"", decisionCase{"npx", G, RuleNpx, ""}},
		{"", decisionCase{"npx .bin", G, RuleNpx, ""}},
		{"", decisionCase{"npx vite --config=/tmp/x", G, RulePathAbsolute, "--config"}},
		{"", decisionCase{"npx vite build --outDir ../x", G, RulePathClimbs, ""}},
		{"", decisionCase{"npx vite root=/x", G, RulePathAbsolute, ""}},
	}
	for _, tt := range tests {
		in := b.in(tt.cmd)
		in.Cwd = tt.cwd
		check(t, in, tt.decisionCase)
	}

	// With no FS, neither allowance applies.
	for _, cmd := range []string{"npm ci", "npx vite build"} {
		in := b.in(cmd)
		in.Cwd = "npm"
		in.FS = nil
		if v := Decide(in); v.Kind != Gated {
			t.Errorf("%q with no FS: got %v (%s), want gated", cmd, v.Kind, v.Reason)
		}
	}
	// Neither is an allowance outside run mode.
	for _, m := range []Mode{ModeAsk, ModeEdit} {
		in := b.in("npx vite build")
		in.Mode = m
		if v := Decide(in); v.Kind != Gated {
			t.Errorf("%q in %s mode: got %v, want gated", in.Command, m, v.Kind)
		}
	}
}

func TestModes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		mode Mode
		cmd  string
		want Kind
		rule Rule
	}{
		{ModeRun, "ls -la", Auto, RuleRunList},
		{ModeEdit, "ls -la", Gated, RuleEditMode},
		{ModeAsk, "ls -la", Gated, RuleAskMode},
		{ModeAsk, "npm test; rm -rf .", Gated, RuleAskMode},
		{ModeEdit, "rm -rf .", Gated, RuleEditMode},
		{"", "ls", Gated, RuleBadMode},
		{"RUN", "ls", Gated, RuleBadMode},
	}
	for _, tt := range tests {
		in := b.in(tt.cmd)
		in.Mode = tt.mode
		v := check(t, in, decisionCase{cmd: tt.cmd, want: tt.want, rule: tt.rule})
		if v.Kind != Auto && !strings.Contains(v.Reason, v.Program) {
			t.Errorf("%q in %q: reason %q does not name the program", tt.cmd, tt.mode, v.Reason)
		}
	}
	for _, s := range []string{"ask", "edit", "run"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q): got %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("auto"); err == nil {
		t.Errorf("ParseMode(auto): got no error")
	}
}

func TestRemembered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	home := filepath.Join(b.ws, "home")
	exact := Remembered{Agent: "dev", Workspace: b.ws, Argv: []string{"rm", "-rf", "build"}}
	prefix := Remembered{Agent: "dev", Workspace: b.ws + "/", Argv: []string{"npm", "install"}, Prefix: true}
	other := Remembered{Agent: "other", Workspace: b.ws, Argv: []string{"git", "status"}}
	moved := Remembered{Agent: "dev", Workspace: filepath.Join(b.root, "old"), Argv: []string{"git", "log"}}
	catAll := Remembered{Agent: "dev", Workspace: b.ws, Argv: []string{"cat"}, Prefix: true}
	echo := Remembered{Agent: "dev", Workspace: b.ws, Argv: []string{"echo", "x", ">>~/.zshenv"}}
	all := []Remembered{exact, prefix, other, moved, catAll, echo}
	tests := []struct {
		mode Mode
		cmd  string
		want Kind
		rule Rule
	}{
		{ModeRun, "rm -rf build", Auto, RuleRemembered},
		{ModeEdit, "rm -rf build", Auto, RuleRemembered},
		{ModeAsk, "rm -rf build", Gated, RuleAskMode},
		{ModeRun, "rm -rf 'build'", Auto, RuleRemembered},
		{ModeRun, "rm  -rf   build", Auto, RuleRemembered},
		{ModeRun, "rm -rf build x", Gated, RuleNotListed},
		{ModeRun, "rm -rf", Gated, RuleNotListed},
		{ModeRun, "npm install", Auto, RuleRemembered},
		{ModeRun, "npm install lodash", Auto, RuleRemembered},
		{ModeEdit, "npm install -D lodash", Auto, RuleRemembered},
		{ModeAsk, "npm install lodash", Gated, RuleAskMode},
		{ModeRun, "npm installx", Gated, RuleSubcommand},
		{ModeRun, "npm ci", Gated, RuleLockfile},
		{ModeRun, "git status", Gated, RuleNotListed},
		{ModeRun, "git log", Gated, RuleNotListed},
		// Only a plain command can be remembered.
		{ModeRun, "echo x >>~/.zshenv", Gated, RuleNotPlain},
		{ModeEdit, "echo x >>~/.zshenv", Gated, RuleEditMode},
		// A protected path beats a remembered command.
		{ModeRun, "cat ../home/.ssh/id_ed25519", Gated, RuleProtected},
		{ModeRun, "cat README.md", Auto, RuleRunList},
		{ModeEdit, "cat README.md", Auto, RuleRemembered},
	}
	for _, tt := range tests {
		in := b.in(tt.cmd)
		in.Cwd = "app"
		in.Mode = tt.mode
		in.Remembered = all
		in.Protected = HomeProtected(home)
		check(t, in, decisionCase{cmd: tt.cmd, want: tt.want, rule: tt.rule})
	}
	// An agent with no name matches nothing.
	in := b.in("rm -rf build")
	in.Agent = ""
	in.Remembered = all
	if v := Decide(in); v.Kind != Gated {
		t.Errorf("no agent: got %v, want gated", v.Kind)
	}

	prefixTests := []struct {
		argv []string
		want []string
	}{
		{[]string{"npm", "install", "lodash"}, []string{"npm", "install"}},
		{[]string{"cargo", "add", "serde"}, []string{"cargo", "add"}},
		{[]string{"rm", "-rf", "."}, nil},
		{[]string{"cat", "/etc/passwd"}, nil},
		{[]string{"make"}, nil},
		{[]string{"./x", "run"}, nil},
		{[]string{"git", "Status"}, nil},
	}
	for _, tt := range prefixTests {
		if got := PrefixOf(tt.argv); !slices.Equal(got, tt.want) {
			t.Errorf("PrefixOf(%q): got %q, want %q", tt.argv, got, tt.want)
		}
	}
}

func TestWorkspaceAndCwd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		ws, cwd string
		cmd     string
		want    Kind
		rule    Rule
		dir     string // relative to b.ws, "" not checked
	}{
		{b.ws, "", "ls", Auto, RuleRunList, "."},
		{b.ws, ".", "ls", Auto, RuleRunList, "."},
		{b.ws, "app/src", "ls", Auto, RuleRunList, "app/src"},
		{b.ws, filepath.Join(b.ws, "app"), "ls", Auto, RuleRunList, "app"},
		{b.ws + "/", "app/../app/src", "cat x", Auto, RuleRunList, "app/src"},
		{b.ws, "app/src", "cat ../x", Gated, RulePathClimbs, "app/src"},
		{b.ws, "..", "ls", Refused, RuleCwdOutside, ""},
		{b.ws, "app/../..", "ls", Refused, RuleCwdOutside, ""},
		{b.ws, "/tmp", "ls", Refused, RuleCwdOutside, ""},
		{b.ws, b.ws + "x", "ls", Refused, RuleCwdOutside, ""},
		{b.ws, b.root, "ls", Refused, RuleCwdOutside, ""},
		{"", "", "ls", Gated, RuleNoWorkspace, ""},
		{"ws", "", "ls", Refused, RuleBadWorkspace, ""},
		{b.ws, "", "", Refused, RuleEmpty, "."},
		{b.ws, "", "  \t ", Refused, RuleEmpty, "."},
		{b.ws, "", "echo 'unterminated", Refused, RuleUnsplittable, "."},
		{b.ws, "", "echo a\x00b", Refused, RuleUnsplittable, "."},
		{b.ws, "..", "echo 'unterminated", Refused, RuleCwdOutside, ""},
	}
	for _, tt := range tests {
		in := Input{Command: tt.cmd, Workspace: tt.ws, Cwd: tt.cwd, Mode: ModeRun, Agent: "dev"}
		v := Decide(in)
		if v.Kind != tt.want || v.Rule != tt.rule {
			t.Errorf("ws %q cwd %q %q: got %v %s (%s), want %v %s", tt.ws, tt.cwd, tt.cmd, v.Kind, v.Rule, v.Reason, tt.want, tt.rule)
		}
		if tt.dir != "" {
			want := filepath.Join(b.ws, tt.dir)
			if v.Dir != want {
				t.Errorf("ws %q cwd %q: got dir %q, want %q", tt.ws, tt.cwd, v.Dir, want)
			}
		}
	}
}

func TestProtected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The workspace is placed above a home directory: §2's paths are refused even so.
	home := filepath.Join(b.ws, "home")
	data := filepath.Join(b.ws, "data")
	prot := append(HomeProtected(home), data, "relative/ignored")
	tests := []struct {
		cwd  string
		cmd  string
		want Kind
		rule Rule
	}{
		// A run directory that holds a protected path: nothing there is auto, since a
		// recursive read from it (grep -r, rg, find, a test runner) would reach it.
		{"", "cat README.md", Gated, RuleProtected},
		{"", "grep -r key .", Gated, RuleProtected},
		{"home", "grep -r key", Gated, RuleProtected},
		// From a directory that holds none, any word that reaches one.
		{"app", "cat ../home/.ssh/id_ed25519", Gated, RuleProtected},
		{"app", "cat ../home/.zshenv", Gated, RuleProtected},
		{"app", "grep -r key ../home/.aws", Gated, RuleProtected},
		{"app", "ls ../data", Gated, RuleProtected},
		{"app", "tsc -p ../home/.config/gh/x.json", Gated, RuleProtected},
		{"app", "echo --file=../home/.netrc", Gated, RuleProtected},
		{"app", "echo -f../home/.netrc", Gated, RuleProtected},
		{"app", "cat " + filepath.Join(home, ".ssh/id_rsa"), Gated, RuleProtected},
		{"app", "cat " + filepath.Join(home, ".sshx"), Gated, RulePathAbsolute},
		{"app", "cat ../home/notes.txt", Gated, RulePathClimbs},
		{"app", "cat notes.txt", Auto, RuleRunList},
		{"app", "grep -r key .", Auto, RuleRunList},
		// A cwd under one is refused outright.
		{"home/.ssh", "ls", Refused, RuleCwdProtected},
		{"data/vault", "ls", Refused, RuleCwdProtected},
	}
	for _, tt := range tests {
		in := b.in(tt.cmd)
		in.Cwd = tt.cwd
		in.Protected = prot
		check(t, in, decisionCase{cmd: tt.cmd, want: tt.want, rule: tt.rule})
	}
	if got := HomeProtected("relative"); got != nil {
		t.Errorf("HomeProtected(relative): got %q, want nil", got)
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		want []string
		err  error
	}{
		{"ls", []string{"ls"}, nil},
		{"  ls   -la\tsrc  ", []string{"ls", "-la", "src"}, nil},
		{`grep -n "a b" 'c d'`, []string{"grep", "-n", "a b", "c d"}, nil},
		{`echo a"b c"'d'e`, []string{"echo", "ab cde"}, nil},
		{`echo '' ""`, []string{"echo", "", ""}, nil},
		{`echo "it's"`, []string{"echo", "it's"}, nil},
		{`echo 'say "hi"'`, []string{"echo", `say "hi"`}, nil},
		{"--include='*.go'", []string{"--include=*.go"}, nil},
		{`echo a\ b`, []string{"echo", `a\`, "b"}, nil},
		{"echo $HOME", []string{"echo", "$HOME"}, nil},
		{"a\nb", []string{"a", "b"}, nil},
		{"", nil, nil},
		{"   ", nil, nil},
		{"echo 'x", nil, ErrUnterminatedQuote},
		{`echo "x`, nil, ErrUnterminatedQuote},
		{"echo \x00", nil, ErrNUL},
	}
	for _, tt := range tests {
		got, err := Split(tt.cmd)
		if !errors.Is(err, tt.err) {
			t.Errorf("Split(%q): got error %v, want %v", tt.cmd, err, tt.err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q): got %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

// TestPlain checks §5 item 1 character by character: each character it names makes a
// command not plain, wherever it stands, quoted or not. The reading is core/cmdline's, the
// permission engine's too, and stricter than the seed's "* and ? are text here": a
// wildcard, a comment (#) or a history character (^ !) is text only in quotes, and a
// first word a shell would read as an assignment or a keyword is not plain.
func TestPlain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []string{"$", "`", "~", "|", ";", "&", "<", ">", "(", ")", "{", "}", "[", "]", "\n", "\\"} {
		for _, cmd := range []string{"echo a" + c + "b", "echo '" + c + "'", `echo "` + c + `"`, "echo " + c} {
			if c == "\n" && cmd == "echo "+c {
				cmd = "echo x" + c
			}
			v := Decide(b.in(cmd))
			if v.Kind == Auto || v.Plain || v.Rule != RuleNotPlain {
				t.Errorf("%q: got %v %s plain=%v, want gated not-plain", cmd, v.Kind, v.Rule, v.Plain)
			}
			if !strings.Contains(v.Reason, "not a plain command") {
				t.Errorf("%q: reason %q does not say it is not a plain command", cmd, v.Reason)
			}
		}
	}
	tests := []struct {
		cmd   string
		plain bool
	}{
		{"find . -name *.go", false},
		{"find . -name '*.go'", true},
		{"find . -name a?.go", false},
		{"find . -name 'a?.go'", true},
		{"rg -g '!vendor' foo", true},
		{`rg -g "!vendor" foo`, false},
		{"rg -g !vendor foo", false},
		{"grep -n a#b x", false},
		{"grep -n '#x' x", true},
		{`grep -n ""#x x`, false},
		{"grep -n ^x y", false},
		{"grep -n '^x' y", true},
		{"FOO=x ls", false},
		{"'FOO=x' ls", true},
		{"ls FOO=x", true},
		{"time ls", false},
		{"'time' ls", true},
		{"echo #x", false},
		{"echo\t#x", false},
		{"echo 'a\tb'", false},
		{"echo a\rb", false},
		{"echo a\vb", false},
		{"echo a\x7fb", false},
		{"echo a\u200bb", false},
		{"echo a\u202eb", false},
		{"echo a\u00a0b", false},
		{"echo \xff", false},
		{"echo é", true},
	}
	for _, tt := range tests {
		v := Decide(b.in(tt.cmd))
		if v.Plain != tt.plain {
			t.Errorf("%q: got plain=%v (%s), want %v", tt.cmd, v.Plain, v.Reason, tt.plain)
		}
		if !tt.plain && v.Kind == Auto {
			t.Errorf("%q: got auto for a command that is not plain", tt.cmd)
		}
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[Kind]string{Auto: "auto", Gated: "gated", Refused: "refused"} {
		got, _ := k.MarshalText()
		if k.String() != want || string(got) != want {
			t.Errorf("got %q/%q, want %q", k.String(), got, want)
		}
	}
	var v Verdict
	if v.Kind != Gated {
		t.Errorf("the zero Verdict is %v, want gated", v.Kind)
	}
}

// TestInstallCards: an installer's card names what it does, as §5 asks of "the old parser".
func TestInstallCards(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, cmd := range []string{"pip install requests", "npm i lodash", "yarn add x", "cargo install ripgrep", "go install x@latest", "go get x"} {
		v := Decide(b.in(cmd))
		if v.Kind != Gated || !strings.Contains(v.Reason, "installs packages this machine did not have") {
			t.Errorf("%q: got %v %q, want gated naming the install", cmd, v.Kind, v.Reason)
		}
	}
}
