package testmetric

import (
	"regexp"
	"strings"
)

// pytestLine is pytest's final summary line, framed by = signs, or bare under -q:
//
//	==================== 2 failed, 5 passed in 0.12s =====================
//	=========== 1 failed, 1 passed, 1 skipped, 2 errors in 75.02s (0:01:15) ===========
//	1 passed, 1 warning in 0.01s
//	============================ no tests ran in 0.01s =============================
//	=============== 3 passed in 0.03 seconds ===============     (pytest before 5.x)
var pytestLine = regexp.MustCompile(`^(?:=+ )?(no tests ran|\d+ [a-z]+(?:, \d+ [a-z]+)*) in \d+(?:\.\d+)?(?:s| seconds)(?: \(\d+:\d\d:\d\d\))?(?: =+)?$`)

// pytestWords are the outcomes pytest's summary line counts.
var pytestWords = []string{"failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "warning", "warnings", "error", "errors", "rerun"}

// readPytest reads pytest's summary lines. Errors (a test whose setup or teardown raised, a
// module that failed to collect) are counted as failing: they are tests that did not pass.
func readPytest(lines []string) []summary {
	var out []summary
	for _, l := range lines {
		m := pytestLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[1] == "no tests ran" {
			out = append(out, summary{format: Pytest})
			continue
		}
		c, ok := counts(strings.Split(m[1], ", "), pytestWords...)
		if !ok {
			continue
		}
		failed := c["failed"] + c["error"] + c["errors"]
		out = append(out, summary{format: Pytest, failed: failed, ran: failed + c["passed"] + c["xfailed"] + c["xpassed"]})
	}
	return out
}
