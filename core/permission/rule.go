package permission

import (
	"fmt"
	"path"
	"strings"
)

// Rule is one parsed command(...) pattern of permissions.allow or permissions.deny.
// A rule matches a command whose words begin with the rule's words: command(git status)
// matches "git status" and "git status --short", and command(head) matches
// "head -n 20 file.txt". Words are compared after quotes are removed, so
// command(git status) also matches "git 'status'"; nothing else is normalized.
type Rule struct {
	// Words are the words inside command(...), unquoted.
	Words []string
}

// String renders the rule as command(...) with its words separated by single spaces.
func (r Rule) String() string {
	return "command(" + strings.Join(r.Words, " ") + ")"
}

// RuleError reports a command(...) pattern that cannot be read.
type RuleError struct {
	// Rule is the pattern as written.
	Rule string
	// Problem says what is wrong.
	Problem string
}

// Error renders the rule and the problem.
func (e *RuleError) Error() string {
	return fmt.Sprintf("permission: rule %q: %s", e.Rule, e.Problem)
}

// Is makes errors.Is(err, ErrInvalidPolicy) true.
func (e *RuleError) Is(target error) bool {
	return target == ErrInvalidPolicy
}

// ParseRule reads a command(...) pattern. Space around the whole pattern is ignored; the
// text inside the parentheses must be one plain command (words and quotes only, see the
// package documentation): no wildcard, no shell operator, nothing expanded. A pattern
// that is not of this form is an error, and such a pattern never allows a command.
func ParseRule(s string) (Rule, error) {
	t := strings.TrimSpace(s)
	const prefix = "command("
	if !strings.HasPrefix(t, prefix) || !strings.HasSuffix(t, ")") || len(t) < len(prefix)+1 {
		return Rule{}, &RuleError{Rule: s, Problem: "want command(...)"}
	}
	inner := t[len(prefix) : len(t)-1]
	words, ok := plainWords(inner)
	if !ok {
		return Rule{}, &RuleError{Rule: s, Problem: "want plain words inside command(...), with no wildcard or shell syntax"}
	}
	return Rule{Words: words}, nil
}

// hasPrefix reports whether words begin with prefix.
func hasPrefix(words, prefix []string) bool {
	if len(words) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if words[i] != p {
			return false
		}
	}
	return true
}

// CommandAllowed reports whether a shell command matches a command(...) pattern in allow
// (the seed's command_allowed?/2): exactly or as a prefix of whole words. Only a plain
// command can match: one that holds a shell operator, an expansion, a glob or anything
// else plainWords refuses is never allowed, and a pattern that ParseRule refuses allows
// nothing. It does not look at deny rules; Evaluate does.
func CommandAllowed(cmd string, allow []string) bool {
	_, ok := allowingRule(cmd, allow)
	return ok
}

// allowingRule returns the first allow rule that matches cmd.
func allowingRule(cmd string, allow []string) (string, bool) {
	words, ok := plainWords(cmd)
	if !ok {
		return "", false
	}
	for _, raw := range allow {
		r, err := ParseRule(raw)
		if err != nil {
			continue
		}
		if hasPrefix(words, r.Words) {
			return raw, true
		}
	}
	return "", false
}

// denyOutcome is what checking a command against permissions.deny found.
type denyOutcome int

const (
	// denyClear: no rule matches, and the reader is sure of it.
	denyClear denyOutcome = iota
	// denyMatched: a rule matches.
	denyMatched
	// denyBadRule: a rule cannot be read, so no command can be cleared.
	denyBadRule
	// denyUnsure: no rule matched, but the command holds something the reader cannot
	// follow, so one might.
	denyUnsure
)

// maxShellDepth bounds how deep checkDenied reads strings given to wrappers
// (sh -c "sh -c '…'"). Deeper is unsure.
const maxShellDepth = 4

// checkDenied checks a shell command against the deny rules. rule is the rule that
// matched or could not be read. With no rules, every command is clear.
func checkDenied(cmd string, deny []string) (outcome denyOutcome, rule string) {
	if len(deny) == 0 {
		return denyClear, ""
	}
	rules := make([]Rule, 0, len(deny))
	raws := make([]string, 0, len(deny))
	for _, raw := range deny {
		r, err := ParseRule(raw)
		if err != nil {
			return denyBadRule, raw
		}
		rules = append(rules, r)
		raws = append(raws, raw)
	}
	idx, unsure := scanDenied(cmd, rules, 0)
	switch {
	case idx >= 0:
		return denyMatched, raws[idx]
	case unsure:
		return denyUnsure, ""
	}
	return denyClear, ""
}

// scanDenied returns the index of the first rule that matches a program in cmd, or -1,
// and whether the reader was unsure anywhere.
func scanDenied(cmd string, rules []Rule, depth int) (idx int, unsure bool) {
	res := scanShell(cmd)
	unsure = !res.understood
	for _, seg := range res.segments {
		for _, pos := range candidates(seg) {
			w := seg[pos]
			if w.unsure() || rebinders[path.Base(w.text)] {
				unsure = true
			}
			for i, r := range rules {
				m, u := matchAt(seg[pos:], r)
				if m {
					return i, unsure
				}
				unsure = unsure || u
			}
			if !w.unsure() && mayHoldCommand(w.text) {
				if depth+1 > maxShellDepth {
					unsure = true
					continue
				}
				i, u := scanDenied(w.text, rules, depth+1)
				if i >= 0 {
					return i, unsure
				}
				unsure = unsure || u
			}
		}
	}
	return -1, unsure
}

// matchAt reports whether the words begin with the rule's words. The first word also
// matches by its last path element (/bin/rm for rm). unsure is true when a word the rule
// would compare is not known until run time, so it cannot say.
func matchAt(words []shellWord, r Rule) (match, unsure bool) {
	if len(r.Words) == 0 || len(words) < len(r.Words) {
		return false, false
	}
	for i, want := range r.Words {
		w := words[i]
		if w.unsure() {
			return false, true
		}
		got := w.text
		if i == 0 && !strings.Contains(want, "/") {
			got = path.Base(got)
		}
		if got != want {
			return false, false
		}
	}
	return true, false
}
