// Package testmetric reads the developer plugin's one metric, developer.failing_tests
// (seed 000 §11): "how many tests were failing in the last test run recorded for the calling
// agent's workspace … It should go down."
//
// What each part implements:
//
//   - [Runner] (runner.go) is "Only a real test runner is believed — vitest, jest, pytest,
//     python -m pytest|unittest, go test, cargo test, npm|pnpm|yarn|bun test, node --test,
//     make test — because a green typecheck measured as “0 failing tests” would settle a
//     goal as met with nothing tested." Nothing else is a runner: tsc, eslint and go build
//     are not, and neither is a runner asked only to list, compile or dry-run its tests.
//   - [Failing] (measure.go and one file per runner's format) is "The count is read from the
//     runners' own summary lines and added up across them. With … a run that was not a test
//     runner, or a failed run whose output never said how many tests failed, the check
//     records not measurable rather than a zero." A [Measure] is never a zero by default:
//     it is Known only when a summary line of that runner said how many tests failed.
//
// The runners whose output is another runner's (npm, pnpm, yarn and bun test, make test) are
// read with every format here, bun's own included, and their summaries are added up.
//
// What is counted as failing, per runner: vitest's and jest's "N failed" in their Tests
// line; pytest's failed and errors (a test whose setup raised, a module that did not collect
// — tests that did not pass); unittest's failures, errors and unexpected successes; go test's
// --- FAIL lines, innermost only (a failing subtest also fails its parent, and is one test);
// cargo's "N failed" of each test binary; node's fail and cancelled; bun's fail and errors.
//
// A run is "not measurable" ([Measure.Known] false, with a one-sentence reason) when:
//   - the argv was not a runner;
//   - no summary line of the runner's format is in the output;
//   - a summary says tests failed without saying how many (a go test package that failed
//     with no --- FAIL line: a build failure, a panic outside a test, a timeout);
//   - every summary says no test ran;
//   - the run failed (a non-zero exit) but its summaries count no failing test: what failed
//     was a build, a collection or a suite that never ran, not a counted test;
//   - the front of the output was dropped to bound it ([FailingTail]) and the runner's
//     summaries are spread through its output (go test, cargo test and the script runners),
//     so some may be missing.
package testmetric
