package testmetric

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runnerNames is every runner name, and two that are not.
var runnerNames = []string{Vitest, Jest, Pytest, Unittest, GoTest, CargoTest, NodeTest, NpmTest, PnpmTest, YarnTest, BunTest, MakeTest, "tsc", "go build"}

// anchor is a loose test, written apart from the formats, of whether a line could be a
// summary line of a format: every real summary line passes it, and so does much else.
var anchor = map[string]func(line string) bool{
	Vitest:   func(l string) bool { return strings.Contains(l, "Tests ") },
	Jest:     func(l string) bool { return strings.Contains(l, "Tests:") && strings.HasSuffix(l, " total") },
	Pytest:   func(l string) bool { return strings.Contains(l, " in ") },
	Unittest: func(l string) bool { return strings.HasPrefix(l, "Ran ") && strings.Contains(l, " test") },
	GoTest: func(l string) bool {
		return strings.HasPrefix(l, "ok") || strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "?")
	},
	CargoTest: func(l string) bool { return strings.HasPrefix(l, "test result: ") },
	NodeTest:  func(l string) bool { return strings.HasSuffix(strings.TrimRight(l, "0123456789."), " fail ") },
	"bun":     func(l string) bool { return strings.HasPrefix(l, "Ran ") && strings.Contains(l, " across ") },
}

// anchorsOf lists the formats a runner's output may be read with.
func anchorsOf(runner string) []string {
	switch runner {
	case NpmTest, PnpmTest, YarnTest, BunTest, MakeTest:
		return []string{Vitest, Jest, Pytest, Unittest, GoTest, CargoTest, NodeTest, "bun"}
	case Vitest, Jest, Pytest, Unittest, GoTest, CargoTest, NodeTest:
		return []string{runner}
	}
	return nil
}

// hasAnchor reports whether some line of output passes the anchor of one of formats.
func hasAnchor(output string, formats []string) bool {
	for _, l := range normalise(output) {
		for _, f := range formats {
			if anchor[f](l) {
				return true
			}
		}
	}
	return false
}

// FuzzFailing: arbitrary output never panics; a Known measure comes only from output holding
// a summary line of that runner, is never negative, and is never zero for a failed run; a
// measure that is not Known carries a reason and no count; a non-runner is never Known; an
// output with its front dropped is never Known for a runner whose summaries are spread.
func FuzzFailing(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "samples"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		s := sample(f, e.Name())
		for i := range runnerNames {
			f.Add(uint8(i), s, 1, int64(0))
		}
		f.Add(uint8(7), s, 0, int64(10))
	}
	// Inputs that would be slow for a parser quadratic in its input.
	for _, seed := range []struct {
		runner uint8
		output string
	}{
		{4, "--- FAIL: " + strings.Repeat("/", 1<<16) + " (0.00s)\nFAIL\tx\t1s\n"},
		{4, strings.Repeat("--- FAIL: A/B/C/D (0.00s)\n", 1<<12) + "FAIL\tx\t1s\n"},
		{3, strings.Repeat("Ran 1 test in 1s\n\n", 1<<12)},
		{10, strings.Repeat(" 1 pass\n", 1<<12) + "Ran 1 test across 1 file. [1ms]\n"},
		{7, strings.Repeat("\x1b]", 1<<14) + strings.Repeat("\r", 1<<14)},
	} {
		f.Add(seed.runner, seed.output, 1, int64(0))
	}
	f.Add(uint8(0), "Tests  1 failed (1)", 1, int64(0))
	f.Add(uint8(4), "--- FAIL: A (0.00s)\nFAIL\tp\t0.1s", 1, int64(0))
	f.Fuzz(func(t *testing.T, r uint8, output string, exit int, dropped int64) {
		runner := runnerNames[int(r)%len(runnerNames)]
		got := FailingTail(runner, output, exit, dropped)
		if again := FailingTail(runner, output, exit, dropped); again != got {
			t.Fatalf("not deterministic: %+v then %+v", got, again)
		}
		if !got.Known {
			if got.Failing != 0 || got.Reason == "" {
				t.Fatalf("not measurable but %+v", got)
			}
			return
		}
		formats := anchorsOf(runner)
		if formats == nil {
			t.Fatalf("%q is not a runner, got %+v", runner, got)
		}
		if !hasAnchor(output, formats) {
			t.Fatalf("%s: known %+v from output with no summary line:\n%q", runner, got, output)
		}
		if got.Failing < 0 || (exit != 0 && got.Failing == 0) {
			t.Fatalf("%s exit %d: got %+v", runner, exit, got)
		}
		if dropped > 0 && slices.Contains([]string{GoTest, CargoTest, NpmTest, PnpmTest, YarnTest, BunTest, MakeTest}, runner) {
			t.Fatalf("%s with %d bytes dropped: got %+v", runner, dropped, got)
		}
	})
}

// FuzzRunner: any argv is read without panicking, and a runner is only ever one of the
// programs §11 names.
func FuzzRunner(f *testing.F) {
	for _, s := range []string{"go test ./...", "python3 -m pytest", "make -C x test", "node --test", "cargo +x test", "npm run test", "python -m", "make -C", "python3 -W"} {
		f.Add(s)
	}
	programs := []string{"vitest", "jest", "pytest", "py.test", "go", "cargo", "npm", "pnpm", "yarn", "bun", "node", "make"}
	f.Fuzz(func(t *testing.T, command string) {
		argv := strings.Fields(command)
		name, ok := Runner(argv)
		if !ok {
			if name != "" {
				t.Fatalf("%q: not a runner, named %q", command, name)
			}
			return
		}
		if !slices.Contains(programs, argv[0]) && !pythonName.MatchString(argv[0]) {
			t.Fatalf("%q: %s is not a runner's program", command, argv[0])
		}
		if anchorsOf(name) == nil {
			t.Fatalf("%q: unknown runner name %q", command, name)
		}
	})
}
