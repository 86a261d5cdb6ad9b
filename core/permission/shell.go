package permission

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads shell command strings, two ways.
//
// plainWords is the strict reader behind allow rules: it accepts one simple command of
// words and quotes and nothing a shell reads as more than text, and gives up on anything
// else, so that an allow rule can only ever match a command whose words are exactly
// what will run.
//
// scanShell is the conservative reader behind deny rules: it reads any string, finds
// every place where a program name may stand (after ; & | newline ( ) < > !, after
// shell keywords, after wrappers such as sudo, env, xargs and sh, inside the string a
// wrapper is given), and says whether it understood the string well enough to be sure
// that no denied program hides in it. It may find programs that would not run; it must
// not miss one while claiming to be sure.

// plainWords splits cmd into words when it is one plain command: words separated by
// spaces or tabs, with single and double quotes, and no character a shell reads as more
// than text ($ ` \ | ; & < > ( ) { } [ ] * ? ~ ! # ^, a newline, a control or non-printing
// character, invalid UTF-8). Inside single quotes every printable character is text;
// inside double quotes every one but $ ` \ and !. ok is false for anything else,
// including an empty command and an unterminated quote.
func plainWords(cmd string) (words []string, ok bool) {
	if !utf8.ValidString(cmd) {
		return nil, false
	}
	const (
		outside = iota
		single
		double
	)
	state := outside
	var w strings.Builder
	inWord := false
	for _, r := range cmd {
		if r != ' ' && r != '\t' && !unicode.IsPrint(r) {
			return nil, false
		}
		switch state {
		case outside:
			switch {
			case r == ' ' || r == '\t':
				if inWord {
					words = append(words, w.String())
					w.Reset()
					inWord = false
				}
			case r == '\'':
				state, inWord = single, true
			case r == '"':
				state, inWord = double, true
			case strings.ContainsRune("$`\\|;&<>(){}[]*?~!#^", r):
				return nil, false
			default:
				w.WriteRune(r)
				inWord = true
			}
		case single:
			if r == '\'' {
				state = outside
			} else if r == '\t' {
				return nil, false
			} else {
				w.WriteRune(r)
			}
		case double:
			switch {
			case r == '"':
				state = outside
			case r == '\t' || strings.ContainsRune("$`\\!", r):
				return nil, false
			default:
				w.WriteRune(r)
			}
		}
	}
	if state != outside {
		return nil, false
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, false
	}
	return words, true
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

// scanShell reads cmd conservatively, as described at the top of this file.
func scanShell(cmd string) scanResult {
	res := scanResult{understood: true}
	if !utf8.ValidString(cmd) || strings.ContainsRune(cmd, 0) {
		res.understood = false
	}
	rs := []rune(cmd)
	const (
		outside = iota
		single
		double
	)
	state := outside
	var (
		cur     []shellWord
		w       strings.Builder
		inWord  bool
		expand  bool
		glob    bool
		bracket bool
	)
	add := func(r rune) {
		w.WriteRune(r)
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
	// dollar handles a $ at rs[i]; it reports how many runes it consumed beyond the $.
	dollar := func(i int) int {
		if i+1 < len(rs) && (rs[i+1] == '(' || rs[i+1] == '{') {
			// $( ) and $(( )) run or compute, ${ } may hold either: the reader cannot
			// follow their quoting, so it is not sure, and the inside starts a segment.
			res.understood = false
			endSegment()
			return 1
		}
		expand = true
		add('$')
		return 0
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch state {
		case outside:
			switch {
			case r == ' ' || r == '\t':
				endWord()
			case strings.ContainsRune("\n;&|()<>", r):
				endSegment()
			case r == '{' || r == '}' || r == '`':
				res.understood = false
				endSegment()
			case r == '\'':
				state, inWord = single, true
			case r == '"':
				state, inWord = double, true
			case r == '\\':
				if i+1 >= len(rs) {
					res.understood = false
					continue
				}
				i++
				if rs[i] != '\n' { // a backslash-newline joins lines
					add(rs[i])
				}
			case r == '$':
				i += dollar(i)
			case r == '*' || r == '?':
				glob = true
				add(r)
			case r == '[':
				bracket = true
				add(r)
			case r == ']':
				if bracket {
					glob = true
				}
				add(r)
			default:
				add(r)
			}
		case single:
			if r == '\'' {
				state = outside
			} else {
				add(r)
			}
		case double:
			switch {
			case r == '"':
				state = outside
			case r == '\\':
				if i+1 < len(rs) && strings.ContainsRune("$`\"\\\n", rs[i+1]) {
					i++
					if rs[i] != '\n' {
						add(rs[i])
					}
				} else {
					add(r)
				}
			case r == '`':
				res.understood = false
				endSegment()
			case r == '$':
				i += dollar(i)
			default:
				add(r)
			}
		}
	}
	if state != outside {
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
