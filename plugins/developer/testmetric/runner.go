package testmetric

import (
	"regexp"
	"slices"
	"strings"
)

// The runner names Runner returns and Failing takes.
const (
	Vitest    = "vitest"      // vitest [run] …
	Jest      = "jest"        // jest …
	Pytest    = "pytest"      // pytest …, py.test …, python -m pytest …
	Unittest  = "unittest"    // python -m unittest …
	GoTest    = "go test"     // go test …
	CargoTest = "cargo test"  // cargo [+toolchain] test …
	NodeTest  = "node --test" // node --test …
	NpmTest   = "npm test"    // npm test …, npm run test …
	PnpmTest  = "pnpm test"   // pnpm test …, pnpm run test …
	YarnTest  = "yarn test"   // yarn test …, yarn run test …
	BunTest   = "bun test"    // bun test …, bun run test …
	MakeTest  = "make test"   // make … test …
)

// pythonName matches python, python3 and python3.12.
var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)?)?$`)

// Runner reports whether argv, the argument vector that was spawned, runs one of the test
// runners seed 000 §11 believes, and which: one of the names above. Argv[0] must be the bare
// program name. A runner asked to list, compile or dry-run its tests instead of running them
// (go test -c or -list, vitest list or bench, jest --listTests, pytest --collect-only,
// cargo test --no-run, make -n) is not a run of tests. Anything else — tsc, eslint, go build,
// npx vitest, node script.js — is not a runner.
func Runner(argv []string) (string, bool) {
	name, ok := runner(argv)
	if !ok {
		return "", false
	}
	return name, true
}

// runner is Runner, which may name a runner it then says no to.
func runner(argv []string) (string, bool) {
	if len(argv) == 0 {
		return "", false
	}
	prog, args := argv[0], argv[1:]
	switch prog {
	case "vitest":
		if op := firstOperand(args); op == "bench" || op == "list" || op == "init" || op == "typecheck" {
			return "", false
		}
		return Vitest, !anyFlag(args, "--help", "-h", "--version", "-v")
	case "jest":
		return Jest, !anyFlag(args, "--listTests", "--showConfig", "--clearCache", "--init", "--help", "-h", "--version", "-v")
	case "pytest", "py.test":
		return Pytest, pytestRuns(args)
	case "go":
		if len(args) == 0 || args[0] != "test" {
			return "", false
		}
		for _, a := range args[1:] {
			if a == "--" || !strings.HasPrefix(a, "-") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
			if name == "c" || name == "list" || name == "h" || name == "help" {
				return "", false
			}
		}
		return GoTest, true
	case "cargo":
		if len(args) > 0 && strings.HasPrefix(args[0], "+") {
			args = args[1:]
		}
		if len(args) == 0 || args[0] != "test" {
			return "", false
		}
		rest := args[1:]
		if i := slices.Index(rest, "--"); i >= 0 {
			rest = rest[:i]
		}
		return CargoTest, !anyFlag(rest, "--no-run", "--help", "-h")
	case "npm", "pnpm", "yarn", "bun":
		if len(args) > 0 && (args[0] == "test" || (args[0] == "run" && len(args) > 1 && args[1] == "test")) {
			return prog + " test", true
		}
		return "", false
	case "node":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") || a == "--" {
				break // a script: what follows is its own
			}
			if a == "--test" {
				return NodeTest, true
			}
		}
		return "", false
	case "make":
		return MakeTest, makeRunsTest(args)
	}
	if pythonName.MatchString(prog) {
		switch module, rest := pythonModule(args); module {
		case "pytest":
			return Pytest, pytestRuns(rest)
		case "unittest":
			return Unittest, !anyFlag(rest, "-h", "--help")
		}
	}
	return "", false
}

// firstOperand returns the first argument that is not a flag, or "".
func firstOperand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// anyFlag reports whether args hold one of flags, alone or as --flag=value.
func anyFlag(args []string, flags ...string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(flags, name) {
			return true
		}
	}
	return false
}

// pytestRuns reports whether pytest's args run tests rather than only collecting or
// describing them.
func pytestRuns(args []string) bool {
	return !anyFlag(args, "--collect-only", "--co", "--fixtures", "--fixtures-per-test", "--markers", "--help", "-h", "--version", "-V")
}

// pythonModule returns the module python's args run with -m (-m pytest, -mpytest), with the
// arguments after it, or "" when they run a script, a -c string or nothing.
func pythonModule(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m":
			if i+1 < len(args) {
				return args[i+1], args[i+2:]
			}
			return "", nil
		case strings.HasPrefix(a, "-m"):
			return a[2:], args[i+1:]
		case a == "-W" || a == "-X":
			i++ // takes a value
		case strings.HasPrefix(a, "-c"), a == "-", a == "--", !strings.HasPrefix(a, "-"):
			return "", nil
		}
	}
	return "", nil
}

// makeFlagValue lists make's flags that take the next argument as their value.
var makeFlagValue = []string{"-C", "-f", "-I", "-o", "-W", "--directory", "--file", "--makefile", "--include-dir", "--old-file", "--what-if", "--assume-old", "--assume-new", "--new-file"}

// makeRunsTest reports whether make's args name the target test and do not only print,
// question or touch.
func makeRunsTest(args []string) bool {
	target := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case slices.Contains(makeFlagValue, a):
			i++
		case a == "--dry-run" || a == "--just-print" || a == "--recon" || a == "--question" || a == "--touch":
			return false
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-"):
			// A cluster of short flags: -n, -q and -t stop make running anything. A flag
			// that takes a value ends the cluster (-Cdir, -j4).
			for _, c := range a[1:] {
				if c == 'n' || c == 'q' || c == 't' {
					return false
				}
				if strings.ContainsRune("CfIoWjl", c) {
					break
				}
			}
		case a == "test":
			target = true
		}
	}
	return target
}
