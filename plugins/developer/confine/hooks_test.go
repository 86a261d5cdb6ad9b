package confine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestHooksNeverWritten: a write under the directory git runs hooks from, as the lookup
// reports it for the nearest repository, or under any .husky directory, is refused as .git
// is; the lookup is asked once per repository; a lookup that fails refuses the write.
func TestHooksNeverWritten(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		mkdir(t, filepath.Join(b.ws, ".git"))                          // the workspace is a repository
		mkdir(t, filepath.Join(b.ws, "nested", ".git"))                // and holds another one
		writeFile(t, filepath.Join(b.ws, "broken", ".git"), "", 0o644) // whose lookup fails
		var (
			mu    sync.Mutex
			asked []string
		)
		root := b.root.WithHooks(func(repo string) (string, error) {
			mu.Lock()
			asked = append(asked, repo)
			mu.Unlock()
			switch repo {
			case b.root.Dir():
				return ".githooks", nil
			case filepath.Join(b.root.Dir(), "nested"):
				return filepath.Join(b.root.Dir(), "nested", "tools", "hooks"), nil
			case filepath.Join(b.root.Dir(), "broken"):
				return "", errors.New("git could not read it")
			}
			return "", nil
		})
		for _, p := range []string{
			".githooks/pre-commit", ".githooks/sub/new", "src/../.githooks/x",
			"nested/tools/hooks/pre-push", ".husky/pre-commit", "pkg/.husky/_/h", ".HUSKY/x",
		} {
			_, err := root.Write("", p, []byte("#!/bin/sh\nevil\n"))
			var he *HooksDirError
			if !errors.As(err, &he) || !IsRefusal(err) {
				t.Errorf("%s: got %v, want a HooksDirError", p, err)
			}
			if _, err := os.Lstat(filepath.Join(b.ws, p)); !os.IsNotExist(err) {
				t.Errorf("%s: got %v, want it absent", p, err)
			}
		}
		if _, err := root.Write("", "broken/x.txt", []byte("x")); err == nil || IsRefusal(err) {
			t.Errorf("a lookup that failed: got %v, want an error that is not a refusal", err)
		}
		for _, p := range []string{"githooks.txt", "nested/tools/other", "src/hooks/x", "husky.txt"} {
			if _, err := root.Write("", p, []byte("x")); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		// Resolve reports it, and a root without a lookup still refuses .husky.
		p, err := root.Resolve("", ".githooks/pre-commit")
		if err != nil {
			t.Fatal(err)
		}
		if dir, in, err := root.InHooks(p); !in || err != nil || dir != filepath.Join(b.root.Dir(), ".githooks") {
			t.Errorf("InHooks: got %q %v %v", dir, in, err)
		}
		if _, err := b.root.Write("", ".husky/pre-commit", []byte("x")); !errors.As(err, new(*HooksDirError)) {
			t.Errorf("without a lookup, .husky: got %v", err)
		}
		if _, err := b.root.Write("", ".githooks/pre-commit", []byte("x")); err != nil {
			t.Errorf("without a lookup, .githooks is a directory like any other: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(asked)
		if want := []string{b.root.Dir(), filepath.Join(b.root.Dir(), "broken"), filepath.Join(b.root.Dir(), "nested")}; !slices.Equal(asked, want) {
			t.Errorf("the lookup was asked about %q, want each repository once: %q", asked, want)
		}
	})
}

// TestHookManagersGated: the files hook managers read their commands from are flagged like
// .gitattributes.
func TestHookManagersGated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, p := range []string{"lefthook.yml", ".lefthook.yaml", "lefthook-local.yml", "sub/.pre-commit-config.yaml", ".overcommit.yml"} {
		got, err := b.root.Resolve("", p)
		if err != nil || !got.NeedsGate {
			t.Errorf("%s: got NeedsGate %v (%v), want true", p, got.NeedsGate, err)
		}
	}
}
