package testmetric

import "regexp"

// bun test ends with its counts and a line naming the files:
//
//	 12 pass
//	 1 skip
//	 2 fail
//	 28 expect() calls
//	Ran 15 tests across 3 files. [123.00ms]
var (
	bunRan   = regexp.MustCompile(`^Ran (\d+) tests? across \d+ files?\. \[\d+(?:\.\d+)?m?s\]$`)
	bunCount = regexp.MustCompile(`^\s*(\d+) (pass|fail|skip|todo|errors?|expect\(\) calls)$`)
)

// readBun reads each "Ran N tests across" line with the count lines just above it. Errors
// (a file that failed to load, an unhandled error between tests) are counted as failing.
func readBun(lines []string) []summary {
	var out []summary
	for i, l := range lines {
		m := bunRan.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		tests, ok := count(m[1])
		if !ok {
			continue
		}
		c := map[string]int{}
		for j := i - 1; j >= 0; j-- {
			cm := bunCount.FindStringSubmatch(lines[j])
			if cm == nil {
				break
			}
			n, ok := count(cm[1])
			if !ok {
				break
			}
			c[cm[2]] = n
		}
		_, pass := c["pass"]
		_, fail := c["fail"]
		if !pass && !fail {
			continue // the counts are part of the summary; a lone "Ran" line is not one
		}
		failed := c["fail"] + c["error"] + c["errors"]
		ran := tests - c["skip"] - c["todo"]
		if ran < 0 {
			continue
		}
		out = append(out, summary{format: "bun test", failed: failed, ran: ran})
	}
	return out
}
