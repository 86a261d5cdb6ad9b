package testmetric

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Measure is one reading of developer.failing_tests.
type Measure struct {
	// Known is true only when the run's output said, in its runner's own summary lines, how
	// many tests failed. A Measure that is not Known is "not measurable", never a zero.
	Known bool
	// Failing is the number of failing tests, added up across the summaries. It is 0 when
	// not Known, which does not mean no test failed.
	Failing int
	// Reason says in one sentence why the run is not measurable, or, when Known, what was
	// counted.
	Reason string
}

// summary is one summary a format read from the output.
type summary struct {
	// format names the runner whose format it is.
	format string
	// failed is how many tests it says failed.
	failed int
	// ran is how many tests it says ran, or -1 when it does not say.
	ran int
	// uncounted, when not empty, says why this summary reports a failure it does not count.
	uncounted string
}

// format reads one runner's summaries from an output's lines.
type format struct {
	name string
	read func(lines []string) []summary
	// spread is true for a format whose summaries are spread through the output (one per
	// package or test binary), so that a dropped front may have held some of them.
	spread bool
}

// The formats, and which a runner's output is read with.
var (
	formats = map[string]format{
		Vitest:    {Vitest, readVitest, false},
		Jest:      {Jest, readJest, false},
		Pytest:    {Pytest, readPytest, false},
		Unittest:  {Unittest, readUnittest, false},
		GoTest:    {GoTest, readGoTest, true},
		CargoTest: {CargoTest, readCargo, true},
		NodeTest:  {NodeTest, readNode, false},
		"bun":     {"bun test", readBun, false},
	}
	// every is every format, for the runners that run another runner (a script, a Makefile).
	every = []string{Vitest, Jest, Pytest, Unittest, GoTest, CargoTest, NodeTest, "bun"}

	formatsFor = map[string][]string{
		Vitest: {Vitest}, Jest: {Jest}, Pytest: {Pytest}, Unittest: {Unittest}, GoTest: {GoTest},
		CargoTest: {CargoTest}, NodeTest: {NodeTest},
		NpmTest: every, PnpmTest: every, YarnTest: every, BunTest: every, MakeTest: every,
	}
)

// Failing reads how many tests failed from the complete output of a run of runner (a name
// Runner returned) that exited with exitCode (-1 for a run ended by a signal). It is
// FailingTail with nothing dropped.
func Failing(runner, output string, exitCode int) Measure {
	return FailingTail(runner, output, exitCode, 0)
}

// FailingTail reads how many tests failed from output, the last part of a run's output with
// dropped bytes cut from its front (spawn.Result's Output and Dropped). The count is read
// from the runner's own summary lines and added up across them; see the package comment for
// when the answer is "not measurable" instead.
func FailingTail(runner, output string, exitCode int, dropped int64) Measure {
	names, ok := formatsFor[runner]
	if !ok {
		return Measure{Reason: fmt.Sprintf("%q is not a test runner: only vitest, jest, pytest, python -m pytest or unittest, go test, cargo test, npm, pnpm, yarn or bun test, node --test and make test are believed", runner)}
	}
	lines := normalise(output)
	var sums []summary
	spread := len(names) > 1
	for _, n := range names {
		f := formats[n]
		spread = spread || f.spread
		sums = append(sums, f.read(lines)...)
	}
	if len(sums) == 0 {
		return Measure{Reason: fmt.Sprintf("the output of %s holds no summary line saying how many tests failed", runner)}
	}
	if dropped > 0 && spread {
		return Measure{Reason: fmt.Sprintf("the first %d bytes of the output of %s were dropped to bound it, and its summaries are spread through the output, so some may be missing", dropped, runner)}
	}
	failing, ran := 0, false
	for _, s := range sums {
		if s.uncounted != "" {
			return Measure{Reason: s.uncounted}
		}
		failing += s.failed
		ran = ran || s.ran != 0
	}
	if !ran {
		return Measure{Reason: fmt.Sprintf("%s ran no tests", runner)}
	}
	if exitCode != 0 && failing == 0 {
		return Measure{Reason: fmt.Sprintf("%s failed (exit %d) but its summaries count no failing test: what failed was not a test (a build, a collection or a suite that did not run)", runner, exitCode)}
	}
	return Measure{Known: true, Failing: failing, Reason: fmt.Sprintf("%d failing, from %s", failing, describe(sums))}
}

// describe names the summaries counted: "1 vitest summary", "3 go test summaries".
func describe(sums []summary) string {
	var order []string
	count := map[string]int{}
	for _, s := range sums {
		if count[s.format] == 0 {
			order = append(order, s.format)
		}
		count[s.format]++
	}
	parts := make([]string, len(order))
	for i, f := range order {
		word := "summary"
		if count[f] > 1 {
			word = "summaries"
		}
		parts[i] = fmt.Sprintf("%d %s %s", count[f], f, word)
	}
	return strings.Join(parts, " and ")
}

// escape matches terminal escape sequences: CSI (colours, cursor moves), OSC (titles,
// links) and the two-byte ones.
var escape = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|\x1b[@-Z\\\\-_]")

// normalise strips terminal escapes and splits output into lines as a terminal would show
// them: a carriage return starts the line again, trailing blanks are dropped.
func normalise(output string) []string {
	output = escape.ReplaceAllString(output, "")
	lines := strings.Split(output, "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// maxCount is the largest count a summary is believed to carry; a line with a larger one is
// not read as a summary (and sums cannot overflow).
const maxCount = 10_000_000

// count parses a summary's count, failing above maxCount.
func count(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxCount {
		return 0, false
	}
	return n, true
}

// counts parses "N word" parts, each word one of known, into a map from word to N. It fails
// on any other part, or on a word given twice.
func counts(parts []string, known ...string) (map[string]int, bool) {
	m := map[string]int{}
	for _, p := range parts {
		num, word, ok := strings.Cut(p, " ")
		if !ok {
			return nil, false
		}
		n, ok := count(num)
		if !ok {
			return nil, false
		}
		found := false
		for _, k := range known {
			if word == k {
				found = true
			}
		}
		if _, dup := m[word]; !found || dup {
			return nil, false
		}
		m[word] = n
	}
	return m, true
}
