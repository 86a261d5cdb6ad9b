package developer

import (
	"fmt"
	"strings"
)

// This file renders the diff on a write or edit card (§4: "gated with the diff on the
// card"): a line diff in the unified format, with three lines of context. The common head
// and tail are taken off first, and the middle is diffed with Myers' algorithm up to
// maxDiffEdits edits; a middle that needs more is shown as all its old lines removed and
// all its new lines added, which is correct, only not the shortest.

// Bounds of a card's diff.
const (
	// maxDiffEdits bounds the edits Myers' algorithm looks for in the middle.
	maxDiffEdits = 1000
	// maxDiffLines bounds the diff lines a card shows.
	maxDiffLines = 400
	// maxDiffBytes bounds the bytes of diff a card shows.
	maxDiffBytes = 32 << 10
	// diffContext is the lines of context around each change.
	diffContext = 3
)

// diffOp is one line of a diff: ' ' kept, '-' removed, '+' added.
type diffOp struct {
	kind byte
	text string
}

// diffStat counts the lines a diff adds and removes.
type diffStat struct{ added, removed int }

// splitLines splits text into lines, each with its newline; a last line without one is
// kept as it is.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineDiff returns the diff of a and b, line by line.
func lineDiff(a, b []string) []diffOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops := make([]diffOp, 0, len(a)+len(b)-head-tail)
	for _, l := range a[:head] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, myers(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for _, l := range a[len(a)-tail:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

// myers is the shortest edit script from a to b (Myers, 1986), or, past maxDiffEdits, all
// of a removed and all of b added.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(a, b)
	}
	maxD := min(n+m, maxDiffEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int // trace[d] is v over k in [-d, d] after step d
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
				return backtrack(a, b, trace)
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	return replaceAll(a, b)
}

// backtrack walks the trace from the end to the start and returns the edit script.
func backtrack(a, b []string, trace [][]int) []diffOp {
	x, y := len(a), len(b)
	var rev []diffOp
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // v after step d-1, indexed by k+d-1
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		pk := k - 1 // came right: a deletion
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1 // came down: an insertion
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py { // the diagonal after the move
			x, y = x-1, y-1
			rev = append(rev, diffOp{' ', a[x]})
		}
		if pk == k+1 {
			rev = append(rev, diffOp{'+', b[py]})
		} else {
			rev = append(rev, diffOp{'-', a[px]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, diffOp{' ', a[x]})
	}
	ops := make([]diffOp, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}

// replaceAll is the script that removes all of a and adds all of b.
func replaceAll(a, b []string) []diffOp {
	ops := make([]diffOp, 0, len(a)+len(b))
	for _, l := range a {
		ops = append(ops, diffOp{'-', l})
	}
	for _, l := range b {
		ops = append(ops, diffOp{'+', l})
	}
	return ops
}

// stat counts the added and removed lines of ops.
func stat(ops []diffOp) diffStat {
	var s diffStat
	for _, op := range ops {
		switch op.kind {
		case '+':
			s.added++
		case '-':
			s.removed++
		}
	}
	return s
}

// unified renders ops in the unified format for the file name, bounded by maxDiffLines and
// maxDiffBytes; the last line says how much was left out.
func unified(name string, ops []diffOp) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", name, name)
	lines, cutShort := 0, false
	emit := func(s string) bool {
		if lines >= maxDiffLines || b.Len()+len(s) > maxDiffBytes {
			cutShort = true
			return false
		}
		b.WriteString(s)
		lines++
		return true
	}
	// aAt[i] and bAt[i] are the lines of a and b before ops[i].
	aAt, bAt := make([]int, len(ops)+1), make([]int, len(ops)+1)
	for i, op := range ops {
		aAt[i+1], bAt[i+1] = aAt[i], bAt[i]
		if op.kind != '+' {
			aAt[i+1]++
		}
		if op.kind != '-' {
			bAt[i+1]++
		}
	}
	for i := 0; i < len(ops) && !cutShort; {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		aLen, bLen := aAt[end]-aAt[start], bAt[end]-bAt[start]
		aStart, bStart := aAt[start], bAt[start]
		if aLen > 0 {
			aStart++
		}
		if bLen > 0 {
			bStart++
		}
		if !emit(fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)) {
			break
		}
		for _, op := range ops[start:end] {
			line := string(op.kind) + op.text
			if !strings.HasSuffix(op.text, "\n") {
				line += "\n\\ No newline at end of file\n"
			}
			if !emit(line) {
				break
			}
		}
		i = end
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if cutShort {
		s := stat(ops)
		out += fmt.Sprintf("\n… the diff goes on; the card shows the first %d lines or %d KB (+%d −%d lines in all).", maxDiffLines, maxDiffBytes>>10, s.added, s.removed)
	}
	return out
}
