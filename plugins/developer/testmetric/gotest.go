package testmetric

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// go test prints, per package, its tests' output and then one result line:
//
//	--- FAIL: TestAdd (0.00s)
//	    --- FAIL: TestAdd/negative (0.00s)
//	FAIL
//	FAIL	example.com/calc	0.004s
//	ok  	example.com/calc/parse	0.002s
//	ok  	example.com/cached	(cached)
//	ok  	example.com/none	0.001s [no tests to run]
//	?   	example.com/cmd	[no test files]
//	FAIL	example.com/broken [build failed]
var (
	goFailTest = regexp.MustCompile(`^\s*--- FAIL: (\S+) \(\d+(?:\.\d+)?s\)$`)
	goOK       = regexp.MustCompile(`^ok  \t(\S+)\t(.+)$`)
	goFail     = regexp.MustCompile(`^FAIL\t(\S+)(?:\t\d+(?:\.\d+)?s| \[(build failed|setup failed)\])$`)
	goNoFiles  = regexp.MustCompile(`^\?   \t(\S+)\t\[no test files\]$`)
)

// readGoTest reads one summary per package result line. A failed package counts its failing
// tests from the --- FAIL lines printed since the previous package's result, counting only
// the innermost: a subtest's failure fails its parent too, and is one failing test, not two.
// A package that failed with no --- FAIL line, or did not build, failed without a count.
func readGoTest(lines []string) []summary {
	var out []summary
	var failed []string
	for _, l := range lines {
		if m := goFailTest.FindStringSubmatch(l); m != nil {
			failed = append(failed, m[1])
			continue
		}
		if m := goOK.FindStringSubmatch(l); m != nil {
			ran := -1
			if strings.HasSuffix(m[2], "[no tests to run]") {
				ran = 0
			}
			out = append(out, summary{format: GoTest, ran: ran})
			failed = nil
			continue
		}
		if m := goNoFiles.FindStringSubmatch(l); m != nil {
			out = append(out, summary{format: GoTest})
			failed = nil
			continue
		}
		m := goFail.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := summary{format: GoTest, ran: -1, failed: leaves(failed)}
		switch {
		case m[2] != "":
			s.uncounted = fmt.Sprintf("go test: package %s failed to run its tests (%s), so how many of them fail is not known", m[1], m[2])
		case s.failed == 0:
			s.uncounted = fmt.Sprintf("go test: package %s failed with no --- FAIL line (a panic outside a test, a timeout, or TestMain), so how many tests fail is not known", m[1])
		}
		out = append(out, s)
		failed = nil
	}
	return out
}

// leaves counts the distinct names that are not a parent ("A" of "A/b") of another. In
// sorted order the names beginning "A/" follow one another, so one binary search per name
// finds whether it has a child.
func leaves(names []string) int {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	count := 0
	for _, n := range sorted {
		prefix := n + "/"
		i, _ := slices.BinarySearch(sorted, prefix)
		if i == len(sorted) || !strings.HasPrefix(sorted[i], prefix) {
			count++
		}
	}
	return count
}
