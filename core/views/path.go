package views

import (
	"fmt"
	"strconv"
	"strings"
)

// step is one step of a path: a key, or an index into an array.
type step struct {
	key   string
	index int
	isIdx bool
}

// maxPath bounds a path's length in bytes.
const maxPath = 200

// parsePath reads a path: keys separated by dots, each followed by any number of [n]
// indexes ("results", "page.items[0].rows", "[2]"); "" or "." is the result itself. Keys are
// letters, digits, '_' and '-'. Nothing else: no wildcards, filters or arithmetic.
func parsePath(p string) ([]step, error) {
	if p == "" || p == "." {
		return nil, nil
	}
	if len(p) > maxPath {
		return nil, fmt.Errorf("path %q is longer than %d bytes", clip(p, 40), maxPath)
	}
	var steps []step
	for i, seg := range strings.Split(p, ".") {
		name := seg
		rest := ""
		if j := strings.IndexByte(seg, '['); j >= 0 {
			name, rest = seg[:j], seg[j:]
		}
		if name == "" && (i > 0 || rest == "") {
			return nil, fmt.Errorf("path %q has an empty key; write keys separated by single dots", p)
		}
		for _, r := range name {
			if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return nil, fmt.Errorf("path %q has %q in a key; a path is keys (letters, digits, _ and -) and [n] indexes, not an expression", p, r)
			}
		}
		if name != "" {
			steps = append(steps, step{key: name})
		}
		for rest != "" {
			end := strings.IndexByte(rest, ']')
			if rest[0] != '[' || end < 0 {
				return nil, fmt.Errorf("path %q has an unclosed or stray bracket", p)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 || rest[1] == '+' || rest[1] == '-' {
				return nil, fmt.Errorf("path %q indexes with %q; an index is a number from 0", p, rest[1:end])
			}
			steps = append(steps, step{index: n, isIdx: true})
			rest = rest[end+1:]
		}
	}
	return steps, nil
}

// at follows steps from v; false when any step finds nothing.
func at(v any, steps []step) (any, bool) {
	for _, s := range steps {
		switch t := v.(type) {
		case *object:
			if s.isIdx {
				return nil, false
			}
			next, ok := t.get(s.key)
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if !s.isIdx || s.index >= len(t) {
				return nil, false
			}
			v = t[s.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// lookup follows the path p from v. A path that does not parse finds nothing (descriptors
// are checked at start; a path in received data that is wrong draws nothing).
func lookup(v any, p string) (any, bool) {
	steps, err := parsePath(p)
	if err != nil {
		return nil, false
	}
	return at(v, steps)
}
