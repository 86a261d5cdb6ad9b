package testmetric

import (
	"regexp"
	"strings"
)

// jestLine is jest's tests summary (its SummaryReporter):
//
//	Tests:       1 failed, 3 passed, 4 total
//	Tests:       1 failed, 1 skipped, 2 todo, 3 passed, 7 total
//	Tests:       2 passed, 2 of 5 total
//	Tests:       0 total
//
// "Test Suites: 1 failed, 1 passed, 2 total" counts files and is not read.
var jestLine = regexp.MustCompile(`^\s*Tests:\s+((?:\d+ [a-z]+, )*)(?:(\d+) of )?(\d+) total$`)

// readJest reads jest's "Tests:" lines.
func readJest(lines []string) []summary {
	var out []summary
	for _, l := range lines {
		m := jestLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var parts []string
		if m[1] != "" {
			parts = strings.Split(strings.TrimSuffix(m[1], ", "), ", ")
		}
		c, ok := counts(parts, "failed", "skipped", "todo", "passed")
		total, okTotal := count(m[3])
		if !ok || !okTotal {
			continue
		}
		if m[2] != "" {
			if total, okTotal = count(m[2]); !okTotal {
				continue
			}
		}
		if c["failed"]+c["skipped"]+c["todo"]+c["passed"] > total {
			continue
		}
		out = append(out, summary{format: Jest, failed: c["failed"], ran: c["failed"] + c["passed"]})
	}
	return out
}
