package spawn

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"buddi/sandbox"
)

// BenchmarkRunOverhead measures developer.run's overhead over exec'ing the same program
// directly, in the same run: each iteration spawns /bin/true once with exec.Command(…).Run()
// and once with an unboxed Run (resolution on the captured PATH, its own session, output
// captured and bounded, the group finished), and reports the mean of each and their ratio.
func BenchmarkRunOverhead(b *testing.B) {
	env := Env(Owner{Path: "/usr/bin:/bin", Home: "/nonexistent", Lang: "C.UTF-8"})
	dir := b.TempDir()
	path, err := Resolve("true", "/usr/bin:/bin")
	if err != nil {
		b.Fatal(err)
	}
	spec := Spec{Argv: []string{"true"}, Dir: dir, Env: env, Unboxed: true}
	ctx := context.Background()
	var direct, viaRun time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		cmd := exec.Command(path)
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := Run(ctx, spec)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		t2 := time.Now()
		direct += t1.Sub(t0)
		viaRun += t2.Sub(t1)
		n++
	}
	b.ReportMetric(float64(direct.Nanoseconds())/float64(n), "direct-ns/op")
	b.ReportMetric(float64(viaRun.Nanoseconds())/float64(n), "run-ns/op")
	b.ReportMetric(float64(viaRun)/float64(direct), "run/direct")
}

// BenchmarkRunBoxed measures what the box costs a Run, in the same run: each iteration runs
// /bin/true once unboxed and once boxed (the launcher re-executed from this binary, its
// namespaces, mounts, Landlock ruleset and privileges, then the exec), and reports the mean
// of each and their ratio.
func BenchmarkRunBoxed(b *testing.B) {
	if err := sandbox.Check(); err != nil {
		b.Skip(err)
	}
	env := Env(Owner{Path: "/usr/bin:/bin", Home: "/nonexistent", Lang: "C.UTF-8"})
	ws, home := b.TempDir(), b.TempDir()
	unboxed := Spec{Argv: []string{"true"}, Dir: ws, Env: env, Unboxed: true}
	boxed := Spec{Argv: []string{"true"}, Dir: ws, Env: env, Box: &sandbox.Policy{Home: home, Workspace: ws}}
	ctx := context.Background()
	var plain, inBox time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		if res, err := Run(ctx, unboxed); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		t1 := time.Now()
		if res, err := Run(ctx, boxed); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		t2 := time.Now()
		plain += t1.Sub(t0)
		inBox += t2.Sub(t1)
		n++
	}
	b.ReportMetric(float64(plain.Nanoseconds())/float64(n), "unboxed-ns/op")
	b.ReportMetric(float64(inBox.Nanoseconds())/float64(n), "boxed-ns/op")
	b.ReportMetric(float64(inBox)/float64(plain), "boxed/unboxed")
}
