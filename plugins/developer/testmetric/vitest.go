package testmetric

import (
	"regexp"
	"strings"
)

// vitestLine is vitest's tests summary (its reporters' padTitle("Tests") and state string):
//
//	Tests  2 failed | 10 passed (12)
//	Tests  1 failed | 3 passed | 1 skipped | 2 todo (7)
//	Tests  no tests
//
// "Test Files  1 failed | 2 passed (3)" counts files, not tests, and is not read.
var vitestLine = regexp.MustCompile(`^\s*Tests {2,}(no tests|(\d+ [a-z]+(?: \| \d+ [a-z]+)*) \((\d+)\))$`)

// readVitest reads vitest's "Tests" lines.
func readVitest(lines []string) []summary {
	var out []summary
	for _, l := range lines {
		m := vitestLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[1] == "no tests" {
			out = append(out, summary{format: Vitest})
			continue
		}
		c, ok := counts(strings.Split(m[2], " | "), "failed", "passed", "skipped", "todo")
		total, okTotal := count(m[3])
		// Tests that never got a result (a run stopped by --bail) are in the total only.
		if !ok || !okTotal || c["failed"]+c["passed"]+c["skipped"]+c["todo"] > total {
			continue
		}
		out = append(out, summary{format: Vitest, failed: c["failed"], ran: c["failed"] + c["passed"]})
	}
	return out
}
