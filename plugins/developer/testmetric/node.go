package testmetric

import "regexp"

// node --test ends with a block of counts, as TAP comments (the tap reporter, the default
// when the output is not a terminal) or behind "ℹ" (the spec reporter):
//
//	# tests 4
//	# suites 0
//	# pass 2
//	# fail 1
//	# cancelled 1
//	# skipped 0
//	# todo 0
//	# duration_ms 45.12
var nodeLine = regexp.MustCompile(`^(?:#|ℹ) (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\d+(?:\.\d+)?)$`)

// readNode reads each block of consecutive count lines that holds tests, pass and fail.
// Cancelled tests (a timeout, a parent that failed) are failing: node fails the run for them.
func readNode(lines []string) []summary {
	var out []summary
	block := map[string]string{}
	flush := func() {
		defer clear(block)
		tests, ok1 := count(block["tests"])
		pass, ok2 := count(block["pass"])
		fail, ok3 := count(block["fail"])
		if !ok1 || !ok2 || !ok3 {
			return
		}
		cancelled := 0
		if v, there := block["cancelled"]; there {
			var ok bool
			if cancelled, ok = count(v); !ok {
				return
			}
		}
		if tests == 0 {
			pass, fail, cancelled = 0, 0, 0
		}
		out = append(out, summary{format: NodeTest, failed: fail + cancelled, ran: pass + fail + cancelled})
	}
	for _, l := range lines {
		m := nodeLine.FindStringSubmatch(l)
		if m == nil {
			if len(block) > 0 {
				flush()
			}
			continue
		}
		if _, dup := block[m[1]]; dup {
			flush()
		}
		block[m[1]] = m[2]
	}
	if len(block) > 0 {
		flush()
	}
	return out
}
