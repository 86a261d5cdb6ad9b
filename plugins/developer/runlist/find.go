package runlist

import "strings"

// This file reads find's row: "an expression: -name <glob> -iname <glob> -type <word>
// -maxdepth <n> -mindepth <n> -path <glob> -newer <path> -size <word> -not -o -a", with
// "a path" as its operand. find is read the way find reads itself: the words before the
// first one that starts the expression are starting points; the expression is primaries,
// each one word, each taking exactly the value words its definition says. find has no
// bundles, no --long spellings and no "--" here: any such word is a flag not in the table.

// expression reads find's args against r.
func (rd *reader) expression(r *row, args []string) *finding {
	var starts []string
	i := 0
	for ; i < len(args) && !startsExpression(args[i]); i++ {
		starts = append(starts, args[i])
	}
	for ; i < len(args); i++ {
		w := args[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			if w == "!" || w == "," {
				return rd.unknownFlag(w, w)
			}
			return rd.failf(RuleOperand, "", w,
				"%s: %q stands inside the expression, where find reads only primaries, and its path must come first",
				rd.display, w)
		}
		f, ok := lookup(r, w)
		if !ok {
			flag, _, _ := strings.Cut(w, "=")
			return rd.unknownFlag(flag, w)
		}
		if f.value == noValue {
			continue
		}
		if i+1 >= len(args) {
			return rd.failf(RuleMissingValue, f.name, w,
				"%s: %s needs a %s value and none follows", rd.display, f.name, f.value)
		}
		i++
		// find takes the next word as the value whatever it looks like (-size -5k).
		if fd := rd.value(f, args[i], args[i]); fd != nil {
			return fd
		}
	}
	if len(starts) > r.maxOperands {
		return rd.failf(RuleOperand, "", starts[r.maxOperands],
			"%s takes one starting path, and %q is one more", rd.display, starts[r.maxOperands])
	}
	for _, s := range starts {
		if strings.HasPrefix(s, "-") {
			return rd.dashOperand(s)
		}
		if fd := rd.operandPath(s, ""); fd != nil {
			return fd
		}
	}
	return nil
}

// startsExpression reports whether find reads w as the start of its expression rather than
// as a starting point: GNU find's rule is a word that begins with - (other than "-"
// itself), or one of ( ) ! , — the parentheses never reach here, as they make a command
// not plain.
func startsExpression(w string) bool {
	switch w {
	case "!", ",", "(", ")":
		return true
	}
	return len(w) > 1 && w[0] == '-'
}
