package testmetric

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample reads testdata/samples/name: real output, in each runner's own format.
func sample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFailing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		runner string
		sample string
		exit   int
		known  bool
		want   int
		reason string // in the reason
	}{
		// vitest
		{Vitest, "vitest_fail.txt", 1, true, 1, "1 vitest summary"},
		{Vitest, "vitest_pass_color.txt", 0, true, 0, "0 failing"},
		{Vitest, "vitest_no_tests.txt", 1, false, 0, "ran no tests"},
		{Vitest, "vitest_suite_failed.txt", 1, false, 0, "not a test"},
		{Vitest, "jest_fail.txt", 1, false, 0, "no summary line"},
		// jest
		{Jest, "jest_fail.txt", 1, true, 1, "1 jest summary"},
		{Jest, "jest_pass_skipped_todo.txt", 0, true, 0, ""},
		{Jest, "jest_suite_failed.txt", 1, false, 0, "exit 1"},
		{Jest, "jest_no_tests.txt", 1, false, 0, "no summary line"},
		{Jest, "vitest_fail.txt", 1, false, 0, "no summary line"},
		// pytest
		{Pytest, "pytest_fail.txt", 1, true, 2, ""},
		{Pytest, "pytest_quiet.txt", 1, true, 1, ""},
		{Pytest, "pytest_errors_long.txt", 1, true, 3, ""},
		{Pytest, "pytest_collection_error.txt", 2, true, 1, ""},
		{Pytest, "pytest_no_tests.txt", 5, false, 0, "ran no tests"},
		{Pytest, "pytest_deselected.txt", 5, false, 0, "ran no tests"},
		{Pytest, "pytest_old.txt", 0, true, 0, ""},
		{Pytest, "progress_cr.txt", 1, true, 2, ""},
		{Pytest, "unittest_fail.txt", 1, false, 0, "no summary line"},
		// unittest
		{Unittest, "unittest_fail.txt", 1, true, 2, "unittest"},
		{Unittest, "unittest_ok.txt", 0, true, 0, ""},
		{Unittest, "unittest_none.txt", 5, false, 0, "ran no tests"},
		{Unittest, "unittest_import_error.txt", 1, true, 1, ""},
		{Unittest, "pytest_fail.txt", 1, false, 0, "no summary line"},
		// go test
		{GoTest, "go_fail.txt", 1, true, 3, "3 go test summaries"},
		{GoTest, "go_verbose.txt", 1, true, 1, ""},
		{GoTest, "go_pass.txt", 0, true, 0, ""},
		{GoTest, "go_build_failed.txt", 1, false, 0, "package example.com/calc failed to run its tests (build failed)"},
		{GoTest, "go_timeout.txt", 1, false, 0, "no --- FAIL line"},
		{GoTest, "go_no_tests_to_run.txt", 0, false, 0, "ran no tests"},
		{GoTest, "go_no_test_files.txt", 0, false, 0, "ran no tests"},
		{GoTest, "go_build_only_error.txt", 1, false, 0, "no summary line"},
		// cargo test
		{CargoTest, "cargo_fail.txt", 101, true, 1, ""},
		{CargoTest, "cargo_multi.txt", 101, true, 2, "2 cargo test summaries"},
		{CargoTest, "cargo_pass_doctests.txt", 0, true, 0, ""},
		{CargoTest, "cargo_compile_error.txt", 101, false, 0, "no summary line"},
		// node --test
		{NodeTest, "node_tap_fail.txt", 1, true, 2, ""},
		{NodeTest, "node_spec_pass.txt", 0, true, 0, ""},
		{NodeTest, "node_no_tests.txt", 0, false, 0, "ran no tests"},
		// bun test (bun's own runner, or a script)
		{BunTest, "bun_fail.txt", 1, true, 1, "bun test"},
		{BunTest, "vitest_fail.txt", 1, true, 1, "vitest"},
		// scripts and Makefiles: whatever runner's lines appear, added up
		{NpmTest, "npm_jest.txt", 1, true, 2, "1 jest summary"},
		{PnpmTest, "npm_vitest_pass.txt", 0, true, 0, ""},
		{YarnTest, "pytest_fail.txt", 1, true, 2, ""},
		{NpmTest, "npm_missing_script.txt", 1, false, 0, "no summary line"},
		{NpmTest, "npm_tsc.txt", 0, false, 0, "no summary line"},
		{MakeTest, "make_go_pytest.txt", 2, true, 2, "1 pytest summary and 2 go test summaries"},
		{MakeTest, "make_nothing.txt", 0, false, 0, "no summary line"},
		{MakeTest, "go_build_failed.txt", 2, false, 0, "build failed"},
		{MakeTest, "cargo_multi.txt", 2, true, 2, ""},
		{MakeTest, "node_tap_fail.txt", 2, true, 2, ""},
		{MakeTest, "unittest_fail.txt", 2, true, 2, ""},
		// not runners
		{"tsc", "tsc_errors.txt", 2, false, 0, "not a test runner"},
		{"go build", "go_pass.txt", 0, false, 0, "not a test runner"},
		{"", "jest_fail.txt", 1, false, 0, "not a test runner"},
	}
	for _, tt := range tests {
		got := Failing(tt.runner, sample(t, tt.sample), tt.exit)
		if got.Known != tt.known || got.Failing != tt.want || !strings.Contains(got.Reason, tt.reason) || got.Reason == "" {
			t.Errorf("Failing(%q, %s, %d) = %+v; want known %v, %d, reason with %q", tt.runner, tt.sample, tt.exit, got, tt.known, tt.want, tt.reason)
		}
	}
}

// TestFailingAcrossSummaries: counts are added up across every summary in one output, and a
// failed exit with a count of zero is not a zero.
func TestFailingAcrossSummaries(t *testing.T) {
	t.Parallel()
	out := sample(t, "jest_fail.txt") + sample(t, "pytest_fail.txt") + sample(t, "cargo_multi.txt") + sample(t, "bun_fail.txt")
	if got := Failing(NpmTest, out, 1); !got.Known || got.Failing != 1+2+2+1 {
		t.Errorf("got %+v, want 6", got)
	}
	if got := Failing(GoTest, sample(t, "go_pass.txt"), 1); got.Known {
		t.Errorf("a failed run with no failing test counted: %+v", got)
	}
	if got := Failing(GoTest, sample(t, "go_pass.txt"), -1); got.Known {
		t.Errorf("a killed run with no failing test counted: %+v", got)
	}
}

func TestFailingTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		runner  string
		sample  string
		dropped int64
		known   bool
		want    int
	}{
		{Vitest, "vitest_fail.txt", 1 << 20, true, 1}, // one summary, at the end
		{Pytest, "pytest_fail.txt", 1 << 20, true, 2}, // likewise
		{GoTest, "go_fail.txt", 100, false, 0},        // per package: earlier ones may be gone
		{CargoTest, "cargo_multi.txt", 100, false, 0}, // per test binary
		{NpmTest, "npm_jest.txt", 100, false, 0},      // a script may run several runners
		{GoTest, "go_fail.txt", 0, true, 3},           // nothing dropped
	}
	for _, tt := range tests {
		got := FailingTail(tt.runner, sample(t, tt.sample), 1, tt.dropped)
		if got.Known != tt.known || got.Failing != tt.want {
			t.Errorf("FailingTail(%q, %s, dropped %d) = %+v; want known %v, %d", tt.runner, tt.sample, tt.dropped, got, tt.known, tt.want)
		}
	}
}

// TestSummaryLines checks each format on single lines, the near misses included.
func TestSummaryLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		runner string
		line   string
		known  bool
		want   int
	}{
		{Vitest, "      Tests  2 failed | 10 passed (12)", true, 2},
		{Vitest, "Tests  1 failed | 3 passed | 1 skipped | 2 todo (7)", true, 1},
		{Vitest, "      Tests  3 failed | 2 passed (9)", true, 3}, // stopped by --bail
		{Vitest, " Test Files  2 failed | 10 passed (12)", false, 0},
		{Vitest, "      Tests  2 failed | 10 passed (3)", false, 0}, // more than the total
		{Vitest, "      Tests  2 broken (2)", false, 0},
		{Vitest, "Tests  are great", false, 0},
		{Vitest, "      Tests: 2 failed (2)", false, 0},
		{Jest, "Tests:       1 failed, 3 passed, 4 total", true, 1},
		{Jest, "Tests:       2 passed, 2 total", true, 0},
		{Jest, "Tests:       1 failed, 2 passed, 3 of 9 total", true, 1},
		{Jest, "Test Suites: 1 failed, 1 passed, 2 total", false, 0},
		{Jest, "Tests:       1 failed, 3 passed", false, 0},
		{Jest, "Tests:       5 failed, 3 passed, 4 total", false, 0},
		{Pytest, "==== 2 failed, 5 passed in 0.12s ====", true, 2},
		{Pytest, "2 failed, 5 passed in 0.12s", true, 2},
		{Pytest, "= 1 passed, 1 warning in 0.01s =", true, 0},
		{Pytest, "=== 5 tests collected in 0.01s ===", false, 0},
		{Pytest, "2 failed, 5 passed", false, 0},
		{Pytest, "we failed 2 times in 3s", false, 0},
		{Pytest, "2 failed, 2 failed in 1.0s", false, 0},
		{Unittest, "Ran 2 tests in 0.001s\n\nFAILED (failures=2)", true, 2},
		{Unittest, "Ran 2 tests in 0.001s\n\nOK", true, 0},
		{Unittest, "Ran 2 tests in 0.001s\nsomething\nFAILED (failures=2)", false, 0},
		{Unittest, "FAILED (failures=2)", false, 0},
		{Unittest, "Ran 2 tests in 0.001s\n\nFAILED", false, 0},
		{Unittest, "Ran 2 tests in 0.001s\n\nOK (failures=1)", false, 0},
		{GoTest, "--- FAIL: TestA (0.00s)\nFAIL\tx/y\t0.01s", true, 1},
		{GoTest, "--- FAIL: TestA (0.00s)\n--- FAIL: TestA (0.00s)\nFAIL\tx/y\t0.01s", true, 1},
		{GoTest, "--- FAIL: TestA (0.00s)\nok  \tx/y\t0.01s", true, 0}, // a FAIL line from another block
		{GoTest, "--- FAIL: TestA (0.00s)", false, 0},
		{GoTest, "ok x/y 0.01s", false, 0},
		{GoTest, "FAIL", false, 0},
		{CargoTest, "test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s", true, 1},
		{CargoTest, "test result: ok. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s", false, 0},
		{CargoTest, "test result: FAILED. 3 passed; 1 failed", false, 0},
		{NodeTest, "# tests 2\n# pass 1\n# fail 1", true, 1},
		{NodeTest, "ℹ tests 2\nℹ pass 0\nℹ fail 2", true, 2},
		{NodeTest, "# fail 2", false, 0},
		{NodeTest, "# tests 2\n# pass 1\nnoise\n# fail 1", false, 0},
		{BunTest, " 1 pass\n 2 fail\nRan 3 tests across 1 file. [5.00ms]", true, 2},
		{BunTest, "Ran 3 tests across 1 file. [5.00ms]", false, 0},
		{BunTest, " 2 fail\n", false, 0},
	}
	for _, tt := range tests {
		exit := 0
		if tt.want > 0 {
			exit = 1
		}
		got := Failing(tt.runner, tt.line+"\n", exit)
		if got.Known != tt.known || got.Failing != tt.want {
			t.Errorf("Failing(%q, %q) = %+v; want known %v, %d", tt.runner, tt.line, got, tt.known, tt.want)
		}
	}
}

func TestLeaves(t *testing.T) {
	t.Parallel()
	tests := []struct {
		names []string
		want  int
	}{
		{nil, 0},
		{[]string{"TestA"}, 1},
		{[]string{"TestA", "TestA/x", "TestA/y"}, 2},
		{[]string{"TestA", "TestA/x", "TestA/x/deep", "TestAB"}, 2},
		{[]string{"TestA/x", "TestA"}, 1},
	}
	for _, tt := range tests {
		if got := leaves(tt.names); got != tt.want {
			t.Errorf("leaves(%q) = %d, want %d", tt.names, got, tt.want)
		}
	}
}
