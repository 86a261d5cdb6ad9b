package permission

import (
	"path"
	"strings"
	"unicode/utf8"

	"buddi/core/cmdline"
)

// This file reads shell command strings, two ways, both with core/cmdline's reader.
//
// plainWords is the strict reader behind allow rules: cmdline.Plain, the same reading the
// developer plugin's run tool judges and spawns with. It accepts one simple command of
// words and quotes and nothing a shell reads as more than text, and gives up on anything
// else, so that an allow rule can only ever match a command whose words are exactly
// what will run.
//
// scanShell is the conservative reader behind deny rules: it reads any string, finds
// every place where a program name may stand (after ; & | newline ( ) < > !, after
// shell keywords, after wrappers such as sudo, env, xargs and sh, inside the string a
// wrapper is given), and says whether it understood the string well enough to be sure
// that no denied program hides in it. It may find programs that would not run; it must
// not miss one while claiming to be sure. It reads words and quotes with cmdline.Reader
// and gives the characters the reader calls more than text their shell meaning; on a
// plain command it reads exactly plainWords' words, as one segment.

// plainWords splits cmd into words when it is one plain command (cmdline.Plain): words
// separated by spaces or tabs, with single and double quotes, and no character a shell
// reads as more than text. ok is false for anything else, including an empty command and
// an unterminated quote.
func plainWords(cmd string) (words []string, ok bool) {
	return cmdline.Plain(cmd)
}

// shellWord is one word that scanShell read, with what it cannot know about it.
type shellWord struct {
	// text is the word with quotes and escapes removed.
	text string
	// expand: the word holds a $ expansion, so what runs is not text.
	expand bool
	// glob: the word holds an unquoted * or ?, or [ with a later ], so the shell may
	// replace it with file names.
	glob bool
}

// unsure reports whether the word's value at run time is not its text.
func (w shellWord) unsure() bool {
	return w.expand || w.glob
}

// scanResult is what scanShell read.
type scanResult struct {
	// segments are the runs of words between separators. A program name may stand at the
	// start of each (see candidates).
	segments [][]shellWord
	// understood is false when the string holds something the reader cannot follow:
	// $( ), ${ }, $(( )), backticks, braces, an unterminated quote, a trailing backslash,
	// NUL or invalid UTF-8.
	understood bool
}

// scanShell reads cmd conservatively, as described at the top of this file. The reader
// gives it text, blanks and quotes as cmdline reads them; what the reader calls more than
// text, scanShell reads as a shell would.
func scanShell(cmd string) scanResult {
	res := scanResult{understood: true}
	if !utf8.ValidString(cmd) || strings.ContainsRune(cmd, 0) {
		res.understood = false
	}
	var (
		cur     []shellWord
		w       strings.Builder
		inWord  bool
		expand  bool
		glob    bool
		bracket bool
	)
	add := func(s string) {
		w.WriteString(s)
		inWord = true
	}
	endWord := func() {
		if inWord {
			cur = append(cur, shellWord{text: w.String(), expand: expand, glob: glob})
		}
		w.Reset()
		inWord, expand, glob, bracket = false, false, false, false
	}
	endSegment := func() {
		endWord()
		if len(cur) > 0 {
			res.segments = append(res.segments, cur)
			cur = nil
		}
	}
	rd := cmdline.NewReader(cmd)
	// dollar handles a $ just read.
	dollar := func() {
		if r, ok := rd.Peek(); ok && (r == '(' || r == '{') {
			// $( ) and $(( )) run or compute, ${ } may hold either: the reader cannot
			// follow their quoting, so it is not sure, and the inside starts a segment.
			rd.Raw()
			res.understood = false
			endSegment()
			return
		}
		expand = true
		add("$")
	}
	for {
		tok, ok := rd.Next()
		if !ok {
			break
		}
		switch tok.Kind {
		case cmdline.Blank:
			endWord()
			continue
		case cmdline.Open, cmdline.Close:
			inWord = true
			continue
		case cmdline.Text:
			add(tok.Text)
			continue
		}
		// A character that is more than text where it stands.
		r := tok.Rune
		switch tok.Quoting {
		case cmdline.Unquoted:
			switch {
			case strings.ContainsRune("\n;&|()<>", r):
				endSegment()
			case r == '{' || r == '}' || r == '`':
				res.understood = false
				endSegment()
			case r == '\\':
				next, ok := rd.Raw()
				if !ok {
					res.understood = false
					continue
				}
				if next != "\n" { // a backslash-newline joins lines
					add(next)
				}
			case r == '$':
				dollar()
			case r == '*' || r == '?':
				glob = true
				add(tok.Text)
			case r == '[':
				bracket = true
				add(tok.Text)
			case r == ']':
				if bracket {
					glob = true
				}
				add(tok.Text)
			default:
				add(tok.Text)
			}
		case cmdline.Double:
			switch r {
			case '\\':
				if next, ok := rd.Peek(); ok && strings.ContainsRune("$`\"\\\n", next) {
					s, _ := rd.Raw()
					if s != "\n" {
						add(s)
					}
				} else {
					add(tok.Text)
				}
			case '`':
				res.understood = false
				endSegment()
			case '$':
				dollar()
			default:
				add(tok.Text)
			}
		default:
			add(tok.Text)
		}
	}
	if rd.Quoting() != cmdline.Unquoted {
		res.understood = false
	}
	endSegment()
	return res
}

// shellKeywords may stand before a program name; the name is the next word.
var shellKeywords = map[string]bool{
	"!": true, "if": true, "then": true, "else": true, "elif": true, "do": true,
	"while": true, "until": true, "coproc": true,
}

// wrappers run another program named among their arguments (sudo rm, xargs rm, sh -c
// "rm"), so every later word of their segment may be a program name.
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "su": true, "runuser": true, "env": true, "command": true,
	"builtin": true, "exec": true, "eval": true, "nohup": true, "time": true, "nice": true,
	"ionice": true, "timeout": true, "xargs": true, "parallel": true, "stdbuf": true,
	"setsid": true, "busybox": true, "watch": true, "strace": true, "ltrace": true,
	"chrt": true, "taskset": true, "unbuffer": true, "flock": true, "chroot": true,
	"script": true, "sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"mksh": true, "ash": true, "fish": true, "csh": true, "tcsh": true, "trap": true,
	"ssh": true, "pkexec": true, "systemd-run": true, "tmux": true, "screen": true,
	"nsenter": true, "unshare": true, "fakeroot": true, "sg": true, "firejail": true,
	"dbus-run-session": true, "caffeinate": true,
}

// rebinders change what a later program name means (alias r=rm, hash -p /bin/rm ls), so
// after one nothing in the string can be checked by name.
var rebinders = map[string]bool{"alias": true, "hash": true, "enable": true}

// execWords are find's actions; the word after one is a program name.
var execWords = map[string]bool{"-exec": true, "-execdir": true, "-ok": true, "-okdir": true}

// isAssignment reports whether a word is NAME=value, which may stand before a program
// name.
func isAssignment(word string) bool {
	eq := strings.IndexByte(word, '=')
	if eq <= 0 {
		return false
	}
	for i, c := range word[:eq] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// candidates returns the positions in a segment where a program name may stand: the
// first word, and each word after leading assignments and keywords; every later word
// when that program is a wrapper; and the word after a find action.
func candidates(seg []shellWord) []int {
	var pos []int
	i := 0
	for i < len(seg) && !seg[i].unsure() && (isAssignment(seg[i].text) || shellKeywords[seg[i].text]) {
		pos = append(pos, i)
		i++
	}
	if i >= len(seg) {
		return pos
	}
	if wrappers[path.Base(seg[i].text)] {
		for j := i; j < len(seg); j++ {
			pos = append(pos, j)
		}
		return pos
	}
	pos = append(pos, i)
	for j := i + 1; j < len(seg)-1; j++ {
		if execWords[seg[j].text] {
			pos = append(pos, j+1)
		}
	}
	return pos
}

// mayHoldCommand reports whether a word's text could itself be a shell command of
// several words (sh -c "rm -rf x").
func mayHoldCommand(text string) bool {
	return strings.ContainsAny(text, " \t\n;&|()<>`$\\'\"{}")
}
