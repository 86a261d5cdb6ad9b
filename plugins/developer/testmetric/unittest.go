package testmetric

import (
	"regexp"
	"strings"
)

// unittest's TextTestRunner ends with a count line, a blank line and a verdict:
//
//	Ran 3 tests in 0.002s
//
//	FAILED (failures=1, errors=1, skipped=1)
//
// or "OK", "OK (skipped=2, expected failures=1)", and since Python 3.12 "NO TESTS RAN".
var (
	unittestRan     = regexp.MustCompile(`^Ran (\d+) tests? in \d+(?:\.\d+)?s$`)
	unittestVerdict = regexp.MustCompile(`^(OK|FAILED|NO TESTS RAN)(?: \(([a-z ]+=\d+(?:, [a-z ]+=\d+)*)\))?$`)
)

// unittestWords are the counts a verdict may carry.
var unittestWords = []string{"failures", "errors", "skipped", "expected failures", "unexpected successes"}

// readUnittest reads each "Ran N tests" line with the verdict that follows it (after blank
// lines only). Failures, errors and unexpected successes are failing tests: each makes the
// run unsuccessful.
func readUnittest(lines []string) []summary {
	var out []summary
	for i, l := range lines {
		m := unittestRan.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ran, ok := count(m[1])
		if !ok {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j] == "" {
			j++
		}
		if j == len(lines) {
			continue
		}
		v := unittestVerdict.FindStringSubmatch(lines[j])
		if v == nil {
			continue
		}
		c := map[string]int{}
		if v[2] != "" {
			var parts []string
			for _, kv := range strings.Split(v[2], ", ") {
				k, n, _ := strings.Cut(kv, "=")
				parts = append(parts, n+" "+k)
			}
			if c, ok = counts(parts, unittestWords...); !ok {
				continue
			}
		}
		failed := c["failures"] + c["errors"] + c["unexpected successes"]
		switch {
		case v[1] == "OK" && failed > 0, v[1] == "FAILED" && failed == 0, v[1] == "NO TESTS RAN" && ran > 0:
			continue // not a verdict unittest writes
		}
		out = append(out, summary{format: Unittest, failed: failed, ran: ran - c["skipped"]})
	}
	return out
}
