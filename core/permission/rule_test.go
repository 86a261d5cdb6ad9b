package permission

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule    string
		want    []string // nil: an error
		wantStr string
	}{
		{"command(git status)", []string{"git", "status"}, "command(git status)"},
		{"command(head)", []string{"head"}, "command(head)"},
		{"  command(git   status)  ", []string{"git", "status"}, "command(git status)"},
		{"command( ls )", []string{"ls"}, "command(ls)"},
		{"command(git commit -m 'a b')", []string{"git", "commit", "-m", "a b"}, "command(git commit -m a b)"},
		{`command(echo "x")`, []string{"echo", "x"}, "command(echo x)"},
		{"command(npm run test:unit)", []string{"npm", "run", "test:unit"}, "command(npm run test:unit)"},
		{"command(echo ')')", nil, ""},
		{"command(ls '*.go')", []string{"ls", "*.go"}, "command(ls *.go)"},
		{"command('time' ls)", []string{"time", "ls"}, "command(time ls)"},
		{"command(time ls)", nil, ""},
		{"command(FOO=bar ls)", nil, ""},
		{"command(echo '$HOME')", nil, ""},
		{"command(echo a#b)", nil, ""},
		{"command()", nil, ""},
		{"command(  )", nil, ""},
		{"command(git status", nil, ""},
		{"command git status)", nil, ""},
		{"Command(git status)", nil, ""},
		{"git status", nil, ""},
		{"Bash(git status)", nil, ""},
		{"command(npm run test:*)", nil, ""},
		{"command(rm *)", nil, ""},
		{"command(git status; rm -rf /)", nil, ""},
		{"command(git status && ls)", nil, ""},
		{"command(echo $HOME)", nil, ""},
		{"command(echo `id`)", nil, ""},
		{"command(ls ~)", nil, ""},
		{"command(ls (x))", nil, ""},
		{`command(echo "$x")`, nil, ""},
		{"command(echo 'unterminated)", nil, ""},
		{"command(a\nb)", nil, ""},
		{"command(a\x00b)", nil, ""},
		{"command(git\u00a0status)", nil, ""},
		{"command(\xff)", nil, ""},
		{"", nil, ""},
		{"command(", nil, ""},
		{")", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, err := ParseRule(tt.rule)
			if tt.want == nil {
				if err == nil {
					t.Errorf("got %v, want an error", got)
				} else if !errors.Is(err, ErrInvalidPolicy) {
					t.Errorf("got error %v, want one matching ErrInvalidPolicy", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want %v", err, tt.want)
			}
			if !slices.Equal(got.Words, tt.want) {
				t.Errorf("got %q, want %q", got.Words, tt.want)
			}
			if got.String() != tt.wantStr {
				t.Errorf("got %q, want %q", got.String(), tt.wantStr)
			}
		})
	}
}

func TestCommandAllowed(t *testing.T) {
	t.Parallel()
	allow := []string{"command(git status)", "command(head)", "command(npm run test)", "command(bad", "command(rm *)"}
	tests := []struct {
		cmd  string
		want bool
	}{
		{"git status", true},
		{"git status --short", true},
		{"git  status", true},
		{"\tgit status\t", true},
		{"git 'status'", true},
		{`"git" status`, true},
		{"head -n 20 file.txt", true},
		{"head", true},
		{"npm run test", true},
		{"npm run test -- --watch", true},
		{"npm run testing", false},
		{"header", false},
		{"git", false},
		{"git statusx", false},
		{"git log", false},
		{"./git status", false},
		{"/usr/bin/git status", false},
		{"GIT_DIR=/x git status", false},
		{"git status; rm -rf /", false},
		{"git status && rm -rf /", false},
		{"git status || rm -rf /", false},
		{"git status | sh", false},
		{"git status & rm -rf /", false},
		{"git status\nrm -rf /", false},
		{"git status > /etc/passwd", false},
		{"git status < /dev/null", false},
		{"git status $(rm -rf /)", false},
		{"git status `rm -rf /`", false},
		{`git status "$(rm -rf /)"`, false},
		{"git status ${IFS}", false},
		{"head -n 20 ~/.ssh/id_ed25519", false},
		{"head *", false},
		{"head ?", false},
		{"head [ab]", false},
		{"head {a,b}", false},
		{`head \x`, false},
		{"head # comment", false},
		{"head !x", false},
		{"head 'unterminated", false},
		{`head "unterminated`, false},
		{"head \x00", false},
		{"head \r", false},
		{"head \xff", false},
		{"", false},
		{"   ", false},
		{"rm x", false},
		{"rm *", false},
		{"head 'a;b'", false},
		{"head '*'", true},
		{"head '#x' '!y' \"^z\"", true},
		{"head \"!y\"", false},
		{"head 'a\\b'", false},
		{"head '~'", false},
		{`head "a b"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if got := CommandAllowed(tt.cmd, allow); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("no rules", func(t *testing.T) {
		if got := CommandAllowed("git status", nil); got {
			t.Errorf("got %v, want false", got)
		}
	})
}

func TestCheckDenied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd      string
		deny     []string
		want     denyOutcome
		wantRule string
	}{
		{"rm -rf /", []string{"command(rm -rf)"}, denyMatched, "command(rm -rf)"},
		{"rm -rf", []string{"command(rm -rf)"}, denyMatched, "command(rm -rf)"},
		{"rm -r -f /", []string{"command(rm -rf)"}, denyClear, ""},
		{"rm x", []string{"command(rm -rf)"}, denyClear, ""},
		{"rm", []string{"command(rm -rf)"}, denyClear, ""},
		{"rm x", []string{"command(git push)", "command(rm)"}, denyMatched, "command(rm)"},
		{"git push origin main", []string{"command(git push)"}, denyMatched, "command(git push)"},
		{"git pull", []string{"command(git push)"}, denyClear, ""},
		{"ls; rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls && rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls || rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls & rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls | rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls\nrm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"(rm x)", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls >(rm x)", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"! rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"if rm x; then ls; fi", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"while true; do rm x; done", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"FOO=1 BAR=2 rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"/bin/rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"./rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"/bin/rm x", []string{"command(/bin/rm)"}, denyMatched, "command(/bin/rm)"},
		{"rm x", []string{"command(/bin/rm)"}, denyClear, ""},
		{`\rm x`, []string{"command(rm)"}, denyMatched, "command(rm)"},
		{`r\m x`, []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"r'm' x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{`"r"m x`, []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"rm\\\n -rf /", []string{"command(rm -rf)"}, denyMatched, "command(rm -rf)"},
		{"sudo rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"sudo -u root rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"env -i rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"nohup nice -n 5 rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"command rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"exec rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"eval rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"xargs rm < list", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"find . -name x -exec rm {} +", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"sh -c 'rm -rf /'", []string{"command(rm -rf)"}, denyMatched, "command(rm -rf)"},
		{`bash -c "ls; rm x"`, []string{"command(rm)"}, denyMatched, "command(rm)"},
		{`sh -c "sh -c 'rm x'"`, []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"echo $(rm x)", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{`echo "$(rm x)"`, []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"echo `rm x`", []string{"command(rm)"}, denyMatched, "command(rm)"},
		// An over-match, on the safe side: cat reads these lines and runs none of them.
		{"cat <<EOF\nrm x\nEOF", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"trap 'rm x' EXIT", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ssh host rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"/usr/bin/env rm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"bash <<< 'rm x'", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"case a in a) rm x;; esac", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls | tee >(rm x)", []string{"command(rm)"}, denyMatched, "command(rm)"},
		{"ls #\nrm x", []string{"command(rm)"}, denyMatched, "command(rm)"},
		// An over-match, on the safe side: bash would look for a program named \rm.
		{`"\rm" x`, []string{"command(rm)"}, denyMatched, "command(rm)"},
		// Clear: the denied word is an argument, or another program runs.
		{`\; rm x`, []string{"command(rm)"}, denyClear, ""},
		{"ls\\\nrm x", []string{"command(rm)"}, denyClear, ""},
		{"ls -la", []string{"command(rm)"}, denyClear, ""},
		{"git rm x", []string{"command(rm)"}, denyClear, ""},
		{"echo rm x", []string{"command(rm)"}, denyClear, ""},
		{"grep rm file", []string{"command(rm)"}, denyClear, ""},
		{"rmdir x", []string{"command(rm)"}, denyClear, ""},
		{"echo 'rm x; ls'", []string{"command(rm)"}, denyClear, ""},
		{`git commit -m "rm the old files"`, []string{"command(rm)"}, denyClear, ""},
		{"ls $HOME", []string{"command(rm)"}, denyClear, ""},
		{"ls *.go", []string{"command(rm)"}, denyClear, ""},
		{"ls ~/x 2>&1", []string{"command(rm)"}, denyClear, ""},
		{"[ -f x ] && ls", []string{"command(rm)"}, denyClear, ""},
		{"ls # rm", []string{"command(rm -rf)"}, denyClear, ""},
		{"", []string{"command(rm)"}, denyClear, ""},
		{"rm x", nil, denyClear, ""},
		// Unsure: what runs is not known before it runs.
		{"$CMD x", []string{"command(rm)"}, denyUnsure, ""},
		{"${CMD} x", []string{"command(rm)"}, denyUnsure, ""},
		{"$(echo r)m x", []string{"command(rm)"}, denyUnsure, ""},
		{`"$(printf rm)" x`, []string{"command(rm)"}, denyUnsure, ""},
		{"`echo r`m x", []string{"command(rm)"}, denyUnsure, ""},
		{"ls $((1+1))", []string{"command(rm)"}, denyUnsure, ""},
		{"rm $FLAGS /", []string{"command(rm -rf)"}, denyUnsure, ""},
		{"/bin/r? x", []string{"command(rm)"}, denyUnsure, ""},
		{"/bin/r[m] x", []string{"command(rm)"}, denyUnsure, ""},
		{"{rm,x}", []string{"command(rm)"}, denyUnsure, ""},
		{"$'\\x72m' x", []string{"command(rm)"}, denyUnsure, ""},
		{"sudo $CMD", []string{"command(rm)"}, denyUnsure, ""},
		{"bash -c \"$CMD\"", []string{"command(rm)"}, denyUnsure, ""},
		{"sh -c 'x=r; ${x}m y'", []string{"command(rm)"}, denyUnsure, ""},
		{"echo 'unterminated", []string{"command(rm)"}, denyUnsure, ""},
		{`ls \`, []string{"command(rm)"}, denyUnsure, ""},
		{"ls \xff", []string{"command(rm)"}, denyUnsure, ""},
		{"ls \x00", []string{"command(rm)"}, denyUnsure, ""},
		{nestShell("ls", maxShellDepth), []string{"command(rm)"}, denyClear, ""},
		{nestShell("rm x", maxShellDepth), []string{"command(rm)"}, denyMatched, "command(rm)"},
		{nestShell("ls x", maxShellDepth+1), []string{"command(rm)"}, denyUnsure, ""},
		{"shopt -s expand_aliases\nalias r=rm\nr x", []string{"command(rm)"}, denyUnsure, ""},
		{"hash -p /bin/rm ls; ls x", []string{"command(rm)"}, denyUnsure, ""},
		// A rule that cannot be read clears nothing.
		{"ls", []string{"command(rm)", "command(rm *)"}, denyBadRule, "command(rm *)"},
		{"ls", []string{"rm"}, denyBadRule, "rm"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			got, rule := checkDenied(tt.cmd, tt.deny)
			if got != tt.want || rule != tt.wantRule {
				t.Errorf("got %v %q, want %v %q", got, rule, tt.want, tt.wantRule)
			}
		})
	}
}

// nestShell wraps cmd in sh -c n times, quoting it each time with single quotes.
func nestShell(cmd string, n int) string {
	for range n {
		cmd = "sh -c '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
	}
	return cmd
}

// FuzzParseRule: ParseRule never panics, and a rule it refuses allows no command.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"command(git status)", "command(head)", "command()", "command(rm *)",
		"command(a'b c'd)", `command("x" y)`, "command(git status", "command(a;b)", "command(\xff)"} {
		f.Add(s, "git status")
	}
	f.Fuzz(func(t *testing.T, rule, cmd string) {
		r, err := ParseRule(rule)
		if err != nil {
			for _, c := range []string{cmd, rule, "git status", "ls", ""} {
				if CommandAllowed(c, []string{rule}) {
					t.Errorf("rule %q refused by ParseRule (%v) allows %q", rule, err, c)
				}
			}
			if out, _ := checkDenied("ls", []string{rule}); out != denyBadRule {
				t.Errorf("deny rule %q refused by ParseRule: got %v, want denyBadRule", rule, out)
			}
			return
		}
		if len(r.Words) == 0 {
			t.Errorf("rule %q parsed with no words", rule)
		}
		// A parsed rule matches its own words written back plainly, when they are plain.
		back := r.String()
		if r2, err := ParseRule(back); err == nil && !slices.Equal(r2.Words, r.Words) && !containsSpaceWord(r.Words) {
			t.Errorf("rule %q: got %q after a round trip, want %q", rule, r2.Words, r.Words)
		}
	})
}

func containsSpaceWord(words []string) bool {
	for _, w := range words {
		if w == "" || slices.ContainsFunc([]rune(w), func(r rune) bool { return r == ' ' || r == '\t' || r == '\'' || r == '"' }) {
			return true
		}
	}
	return false
}

// FuzzCommand: the command readers never panic; a command that is not plain is never
// allowed by a rule; and a denied program appended after a separator is never cleared.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{"git status", "ls; rm x", "echo $(id)", "a 'b c' \"d\"", "sh -c 'rm x'",
		"x\\\ny", "`", "'", `"$x"`, "find . -exec rm {} +", "sudo -u a b", "\xff", "{a,b}"} {
		f.Add(s)
	}
	special := "$`\\|;&<>(){}[]*?~!#^\n"
	f.Fuzz(func(t *testing.T, cmd string) {
		allow := []string{"command(git status)", "command(ls)", "command(echo)"}
		words, plain := plainWords(cmd)
		if CommandAllowed(cmd, allow) && !plain {
			t.Errorf("command %q is not plain but allowed", cmd)
		}
		if plain {
			unquoted := true
			for _, r := range cmd {
				if r == '\'' || r == '"' {
					unquoted = false
				}
			}
			// Without quotes, a plain command holds none of the shell's characters.
			if unquoted {
				for _, r := range cmd {
					if containsRune(special, r) {
						t.Errorf("command %q holds %q but reads as plain %q", cmd, r, words)
					}
				}
			}
			if len(words) == 0 {
				t.Errorf("command %q reads as plain with no words", cmd)
			}
		}
		// Evaluate never allows a command that is not plain in accept-edits mode.
		d := Evaluate(shell(cmd), Agent{ExecutionMode: ModeAcceptEdits}, Merge(Layer{Permissions: Rules{Allow: allow}}))
		if d.Verdict == VerdictAllow && !plain {
			t.Errorf("command %q is not plain but accept-edits allows it: %v", cmd, d)
		}
		// Whatever comes before, "; rm -rf /" at the end is never cleared by a deny rule.
		deny := Merge(Layer{Permissions: Rules{Deny: []string{"command(rm)"}}})
		// A trailing backslash escapes the tail's first character (\; is a literal ";" and
		// backslash-newline joins lines, so rm would be an argument or part of a word):
		// give such a backslash a space to escape first.
		if trailingBackslashes(cmd)%2 == 1 {
			cmd += " "
		}
		tails := []string{"; rm -rf /", "\nrm -rf /", " && rm -rf /", " | rm -rf /", " $(rm -rf /)", "\t;rm -rf /", "&rm -rf /"}
		for _, tail := range tails {
			if out, _ := checkDenied(cmd+tail, deny.Deny); out == denyClear {
				t.Errorf("command %q: got clear, want matched or unsure", cmd+tail)
			}
			if d := Evaluate(shell(cmd+tail), Agent{ExecutionMode: ModeAuto, DangerouslySkipPermissions: true}, deny); d.Verdict != VerdictBlock {
				t.Errorf("command %q under deny command(rm) in auto: got %v, want block", cmd+tail, d)
			}
		}
	})
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}
