package testmetric

import "regexp"

// cargo test runs one libtest harness per test target, and each ends with:
//
//	test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
//	test result: ok. 5 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out; finished in 0.00s
var cargoLine = regexp.MustCompile(`^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; \d+ ignored; \d+ measured; \d+ filtered out(?:; finished in \d+(?:\.\d+)?s)?$`)

// readCargo reads every "test result:" line: one per test binary, doc-tests included.
func readCargo(lines []string) []summary {
	var out []summary
	for _, l := range lines {
		m := cargoLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		passed, ok1 := count(m[2])
		failed, ok2 := count(m[3])
		if !ok1 || !ok2 || (m[1] == "ok") != (failed == 0) {
			continue
		}
		out = append(out, summary{format: CargoTest, failed: failed, ran: passed + failed})
	}
	return out
}
