package runlist

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file reads a plain command's words against its row of the table (§5 item 2): "Its
// program is on the run list, and every flag it is given is in that program's own grammar,
// and its operands are of the kind that program takes."

// finding is why a command is not admitted by the run list.
type finding struct {
	rule Rule
	// flag is the flag that decided, as the table spells it, or "".
	flag string
	// word is the word of the command that decided, or "".
	word string
	// reason is the card's sentence.
	reason string
	// refuse says no approval can make the command runnable (a path through a link): the
	// verdict is Refused, in every mode.
	refuse bool
}

// reader reads one command against the table.
type reader struct {
	place place
	// display names what is being read in reasons: "grep", "go test", "python3 -m pytest".
	display string
	// prog is the program whose row is being read (the module's, after python -m), and sub
	// its subcommand, or "".
	prog, sub string
	// uses are the paths the command names, as the table reads them, with what the program
	// does with each (resolve.go checks them on the filesystem).
	uses []pathUse
}

// failf builds a finding.
func (rd *reader) failf(rule Rule, flag, word, format string, args ...any) *finding {
	return &finding{rule: rule, flag: flag, word: word, reason: fmt.Sprintf(format, args...)}
}

// admit reads argv against the table. It returns nil when the run list admits it, and the
// name of what it read ("go test", "python3 -m pytest").
func admit(argv []string, pl place) (string, []pathUse, *finding) {
	display, rd, fd := admitReader(argv, pl)
	return display, rd.uses, fd
}

// admitReader is admit, returning the reader with the paths it recorded.
func admitReader(argv []string, pl place) (string, *reader, *finding) {
	prog := argv[0]
	rd := &reader{place: pl, display: prog, prog: prog}
	if strings.ContainsRune(prog, '/') {
		return prog, rd, rd.failf(RuleProgramPath, "", prog,
			"%q names a program by its path, and the run list names programs, not files", prog)
	}
	rows := byProgram[prog]
	if len(argv) > 1 && installers[prog+" "+argv[1]] {
		rule := RuleSubcommand
		if rows == nil {
			rule = RuleNotListed
		}
		return prog, rd, rd.failf(rule, "", argv[1],
			"%s %s installs packages this machine did not have, and no installer is on the run list", prog, argv[1])
	}
	if rows == nil {
		return prog, rd, rd.failf(RuleNotListed, "", prog, "%s is not on the run list", prog)
	}
	fd := rd.rows(rows, argv[1:])
	return rd.display, rd, fd
}

// rows picks the row by subcommand and reads args against it.
func (rd *reader) rows(rows []*row, args []string) *finding {
	first := rows[0]
	if first.subRequired {
		if len(args) == 0 {
			return rd.failf(RuleSubcommand, "", rd.display,
				"%s with no subcommand is not on the run list (it takes one of %s)",
				rd.display, strings.Join(allSubs(rows), ", "))
		}
		for _, r := range rows {
			if slices.Contains(r.subs, args[0]) {
				rd.display += " " + args[0]
				rd.sub = args[0]
				return rd.walk(r, args[1:])
			}
		}
		return rd.failf(RuleSubcommand, "", args[0],
			"%s %s is not on the run list (%s takes one of %s)",
			rd.display, args[0], rd.display, strings.Join(allSubs(rows), ", "))
	}
	if len(args) > 0 && slices.Contains(first.subs, args[0]) {
		rd.display += " " + args[0]
		rd.sub = args[0]
		return rd.walk(first, args[1:])
	}
	if len(args) > 0 && slices.Contains(first.otherSubs, args[0]) {
		return rd.failf(RuleSubcommand, "", args[0],
			"%s %s is not on the run list (%s reads %s as its own subcommand, and the list has only %s)",
			rd.display, args[0], rd.display, args[0], strings.Join(first.subs, ", "))
	}
	if first.operands == moduleOrFile {
		return rd.python(first, args)
	}
	return rd.walk(first, args)
}

// allSubs lists the subcommands of a program's rows.
func allSubs(rows []*row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.subs...)
	}
	return out
}

// python reads python's row: "-m <word>, and it must be the first word", the module one of
// the row's modules and everything after it read by that module's own row; "or one file
// of the project's own, with no flags at all".
func (rd *reader) python(r *row, args []string) *finding {
	if len(args) == 0 {
		return rd.failf(RuleOperand, "", "",
			"%s with no file and no -m reads its program from input, which is not on the run list", rd.display)
	}
	w := args[0]
	if strings.HasPrefix(w, "-m") {
		// CPython's option reader gives -m the rest of its word, or the next word.
		var module string
		rest := args[1:]
		if w == "-m" {
			if len(args) < 2 {
				return rd.failf(RuleMissingValue, "-m", w, "%s: -m needs a module and none follows", rd.display)
			}
			module, rest = args[1], args[2:]
		} else {
			module = w[2:]
		}
		if !slices.Contains(r.modules, module) {
			return rd.failf(RuleFlagValue, "-m", module,
				"%s: -m %q is not one of the modules on the run list (%s)",
				rd.display, module, strings.Join(r.modules, ", "))
		}
		rd.display += " -m " + module
		// python -m puts the run directory first on the module path.
		rd.uses = append(rd.uses, pathUse{word: module, path: module, flag: "-m", role: roleModule})
		rd.prog = module
		return rd.rows(byProgram[module], rest)
	}
	if strings.HasPrefix(w, "-") && len(w) > 1 {
		flag := w
		if !strings.HasPrefix(w, "--") {
			r, _ := utf8.DecodeRuneInString(w[1:])
			flag = "-" + string(r)
		}
		return rd.failf(RuleUnknownFlag, flag, w,
			"%s: %s is not in %s's grammar on the run list, which takes -m only as its first word",
			rd.display, flag, rd.display)
	}
	if len(args) > 1 {
		return rd.failf(RuleOperand, "", args[1],
			"%s runs one file of the project's own with no other words, and %q is one more",
			rd.display, args[1])
	}
	return rd.operandPath(w, "")
}

// walk reads args (after the program and its subcommand) against r.
func (rd *reader) walk(r *row, args []string) *finding {
	if r.style == expression {
		return rd.expression(r, args)
	}
	var ops []string
	seen := map[string]bool{}
	endFlags := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		flagsOpen := !endFlags && (r.interspersed || len(ops) == 0)
		if flagsOpen && w == "--" {
			endFlags = true
			continue
		}
		if flagsOpen && len(w) > 1 && w[0] == '-' {
			n, f := rd.flag(r, args, i, seen)
			if f != nil {
				return f
			}
			i += n
			continue
		}
		if strings.HasPrefix(w, "-") {
			return rd.dashOperand(w)
		}
		ops = append(ops, w)
	}
	return rd.operands(r, ops, seen)
}

// dashOperand is §5: "An operand that begins with a dash is refused even after --".
func (rd *reader) dashOperand(w string) *finding {
	return rd.failf(RuleDashOperand, "", w,
		"%s: the operand %q begins with a dash, which the run list refuses even after --", rd.display, w)
}

// lookup finds the row's flag spelled name.
func lookup(r *row, name string) (flagSpec, bool) {
	for _, f := range r.flags {
		if f.name == name {
			return f, true
		}
	}
	return flagSpec{}, false
}

// unknownFlag is the finding for a flag the row does not have.
func (rd *reader) unknownFlag(flag, word string) *finding {
	if flag != word {
		return rd.failf(RuleUnknownFlag, flag, word,
			"%s: %s (read from %q) is not in %s's grammar on the run list", rd.display, flag, word, rd.display)
	}
	return rd.failf(RuleUnknownFlag, flag, word,
		"%s: %s is not in %s's grammar on the run list", rd.display, flag, rd.display)
}

// flag reads the flag word args[i] and its value. It returns how many following words it
// consumed.
func (rd *reader) flag(r *row, args []string, i int, seen map[string]bool) (int, *finding) {
	w := args[i]
	if r.style == oneWord {
		bare := strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-")
		name, val, hasEq := strings.Cut(bare, "=")
		for _, f := range r.flags {
			if strings.TrimLeft(f.name, "-") == name && name != "" {
				return rd.withValue(f, w, val, hasEq, false, args, i, seen)
			}
		}
		flag, _, _ := strings.Cut(w, "=")
		return 0, rd.unknownFlag(flag, w)
	}
	if strings.HasPrefix(w, "--") {
		name, val, hasEq := strings.Cut(w, "=")
		f, ok := lookup(r, name)
		if !ok {
			return 0, rd.unknownFlag(name, w)
		}
		return rd.withValue(f, w, val, hasEq, false, args, i, seen)
	}
	// A single-dash flag of more than one letter (cargo's -run) is matched whole.
	for _, f := range r.flags {
		if len(f.name) > 2 && f.name[1] != '-' {
			if w == f.name {
				return rd.withValue(f, w, "", false, false, args, i, seen)
			}
			if val, ok := strings.CutPrefix(w, f.name+"="); ok {
				return rd.withValue(f, w, val, true, false, args, i, seen)
			}
		}
	}
	// A bundle: -abc, -n5, -n=5.
	for j := 1; j < len(w); {
		c, size := utf8.DecodeRuneInString(w[j:])
		name := "-" + string(c)
		f, ok := lookup(r, name)
		if !ok {
			return 0, rd.unknownFlag(name, w)
		}
		j += size
		if f.value == noValue {
			seen[f.name] = true
			if strings.HasPrefix(w[j:], "=") {
				return 0, rd.failf(RuleFlagValue, f.name, w,
					"%s: %s takes no value, so %q is not on the run list", rd.display, f.name, w)
			}
			continue
		}
		rest := w[j:]
		switch {
		case rest == "":
			return rd.withValue(f, w, "", false, false, args, i, seen)
		case rest[0] == '=':
			// GNU getopt reads the value as "=v", argparse and clap as "v".
			return rd.withValue(f, w, rest[1:], true, r.style == getopt, args, i, seen)
		case r.style == bundled:
			return 0, rd.failf(RuleFlagValue, f.name, w,
				"%s: %s reads the letters after %s in %q as more flags, so its value must follow = or come as the next word",
				rd.display, rd.display, f.name, w)
		default:
			return rd.withValue(f, w, rest, true, false, args, i, seen)
		}
	}
	return 0, nil
}

// withValue checks flag f given in word w: with an attached value val when attached is
// true, otherwise taking the next word when f takes a value. bothWays asks for val to pass
// read as "=val" too.
func (rd *reader) withValue(f flagSpec, w, val string, attached, bothWays bool, args []string, i int, seen map[string]bool) (int, *finding) {
	seen[f.name] = true
	if f.value == noValue {
		if attached {
			return 0, rd.failf(RuleFlagValue, f.name, w,
				"%s: %s takes no value, so %q is not on the run list", rd.display, f.name, w)
		}
		return 0, nil
	}
	if attached {
		if bothWays {
			if fd := rd.value(f, w, "="+val); fd != nil {
				fd.reason += fmt.Sprintf(" (GNU getopt reads %q as %s with the value %q)", w, f.name, "="+val)
				return 0, fd
			}
		}
		return 0, rd.value(f, w, val)
	}
	if i+1 >= len(args) {
		return 0, rd.failf(RuleMissingValue, f.name, w,
			"%s: %s needs a %s value and none follows", rd.display, f.name, f.value)
	}
	next := args[i+1]
	if strings.HasPrefix(next, "-") {
		return 1, rd.failf(RuleFlagValue, f.name, next,
			"%s: the value of %s, %q, begins with a dash, which %s may read as another flag",
			rd.display, f.name, next, rd.display)
	}
	return 1, rd.value(f, next, next)
}

// value checks one reading v of flag f's value, given in word w.
func (rd *reader) value(f flagSpec, w, v string) *finding {
	switch f.value {
	case wordValue:
		if strings.ContainsRune(v, '/') {
			return rd.failf(RuleFlagValue, f.name, w,
				"%s: the value of %s, %q, must be a <word>, which carries no path separator", rd.display, f.name, v)
		}
	case globValue:
		if strings.HasPrefix(v, "/") || climbs(v) {
			return rd.failf(RuleFlagValue, f.name, w,
				"%s: the value of %s, %q, is a <glob> that begins with / or climbs with .., which could add a root",
				rd.display, f.name, v)
		}
	case numValue:
		if !isDigits(v) {
			return rd.failf(RuleFlagValue, f.name, w,
				"%s: the value of %s, %q, must be digits", rd.display, f.name, v)
		}
	case pathValue:
		return rd.operandPath(v, f.name)
	}
	if f.name == "-p" && rd.prog == "pytest" {
		// pytest -p imports the plugin by its module name.
		rd.uses = append(rd.uses, pathUse{word: w, path: v, flag: f.name, role: roleModule})
	}
	return nil
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// operandPath checks a path operand, or the path value of flag when flag is not "".
func (rd *reader) operandPath(p, flag string) *finding {
	what := fmt.Sprintf("%q", p)
	if flag != "" {
		what = fmt.Sprintf("the value of %s, %q,", flag, p)
	}
	switch prob, pr := rd.place.checkPath(p); prob {
	case pathAbsolute:
		return rd.failf(RulePathAbsolute, flag, p,
			"%s: %s is an absolute path, and run-list paths stay inside the workspace", rd.display, what)
	case pathClimbs:
		return rd.failf(RulePathClimbs, flag, p,
			"%s: %s climbs with .., and run-list paths stay inside the workspace", rd.display, what)
	case pathProtected:
		return rd.failf(RuleProtected, flag, p,
			"%s: %s falls under %q, which is refused even inside a workspace", rd.display, what, pr)
	}
	rd.uses = append(rd.uses, pathUse{word: p, path: p, flag: flag, role: roleRead})
	return nil
}

// operands checks the operands' count and kind.
func (rd *reader) operands(r *row, ops []string, seen map[string]bool) *finding {
	min := r.minOperands
	if r.unlessFlag != "" && seen[r.unlessFlag] {
		min = 0
	}
	if len(ops) < min {
		if r.unlessFlag != "" {
			return rd.failf(RuleOperand, "", "",
				"%s needs at least %d operand unless %s, and has none", rd.display, min, r.unlessFlag)
		}
		return rd.failf(RuleOperand, "", "",
			"%s needs %d operand and has %d", rd.display, min, len(ops))
	}
	if r.maxOperands >= 0 && len(ops) > r.maxOperands {
		extra := ops[r.maxOperands]
		if r.maxOperands == 0 {
			return rd.failf(RuleOperand, "", extra, "%s takes no operands, and %q is one", rd.display, extra)
		}
		return rd.failf(RuleOperand, "", extra,
			"%s takes at most %d operand, and %q is one more", rd.display, r.maxOperands, extra)
	}
	start := len(rd.uses)
	for k, op := range ops {
		var fd *finding
		switch r.operands {
		case paths:
			fd = rd.operandPath(op, "")
		case scriptName:
			if !matchSet(op, lowerDigits+":_.-") || op == ".." {
				fd = rd.failf(RuleOperand, "", op, "%s: %q is not a script name ([a-z0-9:_.-]+)", rd.display, op)
			}
		case bareWords:
			if op == "" || strings.ContainsRune(op, '/') {
				fd = rd.failf(RuleOperand, "", op,
					"%s: %q is not a bare word (one with no path separator)", rd.display, op)
			} else if rd.prog == "unittest" {
				// unittest imports each name (a.b.c, or a file's name) from the run directory.
				rd.uses = append(rd.uses, pathUse{word: op, path: op, role: roleModule})
			}
		case goPatterns:
			p := op
			if p == "..." {
				p = "."
			} else if s, ok := strings.CutSuffix(p, "/..."); ok {
				p = s
			}
			fd = rd.operandPath(p, "")
			if fd != nil {
				fd.word = op
			}
		case makeTargets:
			if !matchSet(op, lowerDigits+upper+":_.-") {
				fd = rd.failf(RuleOperand, "", op,
					"%s: %q is not a bare target ([A-Za-z0-9:_.-]+; no VAR=)", rd.display, op)
			}
		case patternThenPaths:
			if k > 0 {
				fd = rd.operandPath(op, "")
			}
		}
		if fd != nil {
			return fd
		}
	}
	rd.roles(r, rd.uses[start:], seen)
	return nil
}

// roles sets what the program does with its operands' paths, ops, now that its flags are
// known: a formatter that writes writes them (and, given none, the run directory); diff
// reads the entries of a directory, all the way down with -r, following links.
func (rd *reader) roles(r *row, ops []pathUse, seen map[string]bool) {
	set := func(to role) {
		for i := range ops {
			ops[i].role = to
		}
	}
	switch {
	case rd.writes(seen):
		set(roleWrite)
		if len(ops) == 0 {
			rd.uses = append(rd.uses, pathUse{word: rd.display, path: ".", role: roleWrite})
		}
	case rd.prog == "diff" && seen["-r"]:
		set(roleTree)
	case rd.prog == "diff":
		set(roleEntries)
	}
}

// writes reports whether the program being read writes the files it is given, with the
// flags seen: the formatters of the table, unless they only check.
func (rd *reader) writes(seen map[string]bool) bool {
	switch rd.prog {
	case "prettier":
		return seen["--write"]
	case "eslint":
		return seen["--fix"]
	case "ruff":
		return seen["--fix"] || rd.sub == "format" && !seen["--check"]
	case "black":
		return !seen["--check"]
	case "go", "cargo":
		return rd.sub == "fmt"
	}
	return false
}

const (
	lowerDigits = "abcdefghijklmnopqrstuvwxyz0123456789"
	upper       = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

// matchSet reports whether s is one or more bytes, each in set.
func matchSet(s, set string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}
