package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// walkAll walks and returns the paths reported.
func walkAll(t *testing.T, r *Root, cwd, path string, lim Limits) ([]string, WalkSummary) {
	t.Helper()
	var got []string
	sum, err := r.Walk(cwd, path, lim, func(e Entry) error {
		got = append(got, e.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, sum
}

func TestWalk(t *testing.T) {
	t.Parallel()
	mechanisms(t, func(t *testing.T, b *testBundle) {
		symlink(t, "../../outside", filepath.Join(b.ws, "src", "deep", "nested-link"))

		t.Run("links skipped and counted", func(t *testing.T) {
			got, sum := walkAll(t, b.root, "", "", Limits{})
			want := []string{"a.txt", "src", "src/deep", "src/deep/x.txt", "src/main.go"}
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if sum.SkippedLinks != 5 || sum.Entries != len(want) {
				t.Errorf("got %d entries and %d links skipped, want %d and 5", sum.Entries, sum.SkippedLinks, len(want))
			}
			if sum.Limits != (Limits{MaxEntries: DefaultMaxEntries, MaxDepth: DefaultMaxDepth}) {
				t.Errorf("got limits %+v, want the defaults", sum.Limits)
			}
			if sum.EntryLimitReached || sum.DepthLimitReached {
				t.Errorf("got %+v, want no limit reached", sum)
			}
		})
		t.Run("from a cwd", func(t *testing.T) {
			got, sum := walkAll(t, b.root, "src", "deep", Limits{})
			if want := []string{"src/deep/x.txt"}; !slices.Equal(got, want) || sum.SkippedLinks != 1 {
				t.Errorf("got %v with %d links skipped, want %v with 1", got, sum.SkippedLinks, want)
			}
		})
		t.Run("a link asked for is refused", func(t *testing.T) {
			_, err := b.root.Walk("", "link-in", Limits{}, func(Entry) error { return nil })
			symlinkAt("link-in")(t, err)
			_, err = b.root.Walk("", "link-out/", Limits{}, func(Entry) error { return nil })
			symlinkAt("link-out")(t, err)
		})
		t.Run("outside refused", func(t *testing.T) {
			_, err := b.root.Walk("", "..", Limits{}, func(Entry) error { return nil })
			errorAs[*OutsideError](t, err)
		})
		t.Run("a file", func(t *testing.T) {
			var got string
			sum, err := b.root.Walk("", "src/main.go", Limits{}, func(e Entry) error {
				f, err := e.Open()
				if err != nil {
					return err
				}
				defer f.Close()
				content, err := io.ReadAll(f)
				got = fmt.Sprintf("%s@%d:%s", e.Path, e.Depth, content)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := "src/main.go@0:package main"; got != want || sum.Entries != 1 {
				t.Errorf("got %q and %d entries, want %q and 1", got, sum.Entries, want)
			}
		})
		t.Run("entries open", func(t *testing.T) {
			var contents []string
			_, err := b.root.Walk("", "", Limits{}, func(e Entry) error {
				if !e.Mode.IsRegular() {
					if _, err := e.Open(); !IsRefusal(err) {
						t.Errorf("%s: got %v opening a directory, want a refusal", e.Path, err)
					}
					return nil
				}
				f, err := e.Open()
				if err != nil {
					return err
				}
				defer f.Close()
				c, err := io.ReadAll(f)
				contents = append(contents, string(c))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"inside", "x", "package main"}; !slices.Equal(contents, want) {
				t.Errorf("got %q, want %q", contents, want)
			}
		})
		t.Run("SkipDir and SkipAll", func(t *testing.T) {
			var got []string
			_, err := b.root.Walk("", "", Limits{}, func(e Entry) error {
				got = append(got, e.Path)
				switch e.Path {
				case "src/deep":
					return fs.SkipDir
				case "src/main.go":
					return fs.SkipAll
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"a.txt", "src", "src/deep", "src/main.go"}; !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
		t.Run("a directory swapped for a link while walking", func(t *testing.T) {
			// The callback runs between the look at an entry and entering it, so it can
			// swap the directory for a link exactly there.
			var got []string
			sum, err := b.root.Walk("", "", Limits{}, func(e Entry) error {
				got = append(got, e.Path)
				if e.Path == "src" {
					swapForLink(t, filepath.Join(b.ws, "src"), b.outside)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The top directory was read before the swap: a.txt and src are reported, and
			// nothing under src, which is now the outside.
			for _, p := range got {
				if p == "src/main.go" || p == "src/secret.txt" {
					t.Errorf("walked through the swapped link to %s", p)
				}
			}
			if sum.SkippedLinks != 5 { // four links at the top, and src now
				t.Errorf("got %d links skipped, want 5", sum.SkippedLinks)
			}
			// Put it back for the subtests that follow.
			if err := os.Remove(filepath.Join(b.ws, "src")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(b.ws, "src.orig"), filepath.Join(b.ws, "src")); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("a file swapped for a link before Entry.Open", func(t *testing.T) {
			_, err := b.root.Walk("", "", Limits{}, func(e Entry) error {
				if e.Path != "a.txt" {
					return nil
				}
				a := filepath.Join(b.ws, "a.txt")
				if err := os.Rename(a, a+".orig"); err != nil {
					t.Fatal(err)
				}
				symlink(t, filepath.Join(b.outside, "secret.txt"), a)
				f, err := e.Open()
				if err == nil {
					f.Close()
				}
				errorAs[*SwappedError](t, err)
				if err := os.Remove(a); err != nil {
					t.Fatal(err)
				}
				return os.Rename(a+".orig", a)
			})
			if err != nil {
				t.Fatal(err)
			}
		})
		t.Run("a callback error ends the walk", func(t *testing.T) {
			stop := errors.New("stop")
			_, err := b.root.Walk("", "", Limits{}, func(Entry) error { return stop })
			if !errors.Is(err, stop) {
				t.Errorf("got %v, want %v", err, stop)
			}
		})
	})
}

func TestWalkBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 30 {
		writeFile(t, filepath.Join(b.ws, "many", fmt.Sprintf("f%02d", i)), "", 0o644)
		symlink(t, "f00", filepath.Join(b.ws, "many", fmt.Sprintf("l%02d", i)))
	}
	writeFile(t, filepath.Join(b.ws, "d1", "d2", "d3", "d4", "f"), "", 0o644)

	t.Run("entries", func(t *testing.T) {
		t.Parallel()
		got, sum := walkAll(t, b.root, "", "many", Limits{MaxEntries: 10})
		if len(got) != 10 || !sum.EntryLimitReached || sum.Limits.MaxEntries != 10 {
			t.Errorf("got %d entries, %+v; want 10 and the limit reached", len(got), sum)
		}
		if got[0] != "many/f00" || got[9] != "many/f09" {
			t.Errorf("got %v, want f00 to f09", got)
		}
	})
	t.Run("links count against the bound", func(t *testing.T) {
		t.Parallel()
		got, sum := walkAll(t, b.root, "", "many", Limits{MaxEntries: 40})
		if len(got) != 30 || sum.SkippedLinks != 10 || !sum.EntryLimitReached {
			t.Errorf("got %d entries and %d links skipped, %+v; want 30, 10 and the limit reached", len(got), sum.SkippedLinks, sum)
		}
	})
	t.Run("exact fit", func(t *testing.T) {
		t.Parallel()
		got, sum := walkAll(t, b.root, "", "many", Limits{MaxEntries: 60})
		if len(got) != 30 || sum.SkippedLinks != 30 || sum.EntryLimitReached {
			t.Errorf("got %d entries, %+v; want 30, 30 links and no limit reached", len(got), sum)
		}
	})
	t.Run("limit across directories", func(t *testing.T) {
		t.Parallel()
		got, sum := walkAll(t, b.root, "", "d1", Limits{MaxEntries: 2})
		if want := []string{"d1/d2", "d1/d2/d3"}; !slices.Equal(got, want) || !sum.EntryLimitReached {
			t.Errorf("got %v, %+v; want %v and the limit reached", got, sum, want)
		}
	})
	t.Run("depth", func(t *testing.T) {
		t.Parallel()
		got, sum := walkAll(t, b.root, "", "d1", Limits{MaxDepth: 2})
		if want := []string{"d1/d2", "d1/d2/d3"}; !slices.Equal(got, want) || !sum.DepthLimitReached || sum.Limits.MaxDepth != 2 {
			t.Errorf("got %v, %+v; want %v and the depth limit reached", got, sum, want)
		}
		got, sum = walkAll(t, b.root, "", "d1", Limits{MaxDepth: 4})
		if want := []string{"d1/d2", "d1/d2/d3", "d1/d2/d3/d4", "d1/d2/d3/d4/f"}; !slices.Equal(got, want) || sum.DepthLimitReached {
			t.Errorf("got %v, %+v; want %v and no depth limit reached", got, sum, want)
		}
	})
}

func TestWalkProtected(t *testing.T) {
	t.Parallel()
	b := setupHome(t)
	got, sum := walkAll(t, b.root, "", "", Limits{})
	for _, p := range got {
		if _, protected := b.root.protectedAt(filepath.Join(b.root.Dir(), p)); protected {
			t.Errorf("walked into protected %s", p)
		}
	}
	// .ssh, .aws, .bashrc, .config/gh and buddi-data.
	if sum.SkippedProtected != 5 {
		t.Errorf("got %d protected skipped, want 5 (walked %v)", sum.SkippedProtected, got)
	}
	if !slices.Contains(got, ".config/other/x") || !slices.Contains(got, ".sshx") {
		t.Errorf("got %v, want the unprotected neighbours", got)
	}
	_, err := b.root.Walk("", ".ssh", Limits{}, func(Entry) error { return nil })
	protectedAs("~/.ssh")(t, err)
}
