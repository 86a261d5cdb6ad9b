package developer

import (
	"context"
	"io"
	"io/fs"
	"strings"

	"buddi/plugins/developer/confine"
)

// treeSummary is what a walk for list or search did and left out.
type treeSummary struct {
	confine.WalkSummary
	// Ignored counts the entries left out by rule: node_modules and .git always, and what
	// the workspace's .gitignore files ignore. An ignored directory counts once.
	Ignored int
}

// walkTree walks the tree at path (relative to the workspace) for developer.list and
// developer.search, through confine.Walk: symbolic links and protected paths are stepped
// over and counted, never followed (§2), a link in the path asked for is a refusal, and the
// walk is bounded by lim. On top of that it leaves out node_modules and .git always, and
// whatever the .gitignore files inside the workspace ignore (those of path's ancestors
// included). fn sees the entries that remain; the path asked for itself is never left out
// when it is a file. It returns the validated start.
func walkTree(ctx context.Context, root *confine.Root, path string, lim confine.Limits, fn confine.WalkFunc) (confine.Path, treeSummary, error) {
	var sum treeSummary
	start, err := root.Resolve("", path)
	if err != nil {
		return start, sum, err
	}
	if !start.Exists {
		return start, sum, refusef("%q does not exist in the workspace.", path)
	}
	var ig ignores
	// The .gitignore files of the start's ancestors, and of the start when it is a directory.
	bases := []string{"."}
	comps := splitRel(start.Rel)
	upto := len(comps)
	if !start.Mode.IsDir() {
		upto--
	}
	for i := 1; i <= upto; i++ {
		bases = append(bases, joinRel(comps[:i]))
	}
	for _, b := range bases {
		loadIgnore(root, &ig, b)
	}
	ws, err := root.Walk("", start.Rel, lim, func(e confine.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.Depth == 0 {
			return fn(e) // the file asked for
		}
		if e.Name == "node_modules" || isGitName(e.Name) || ig.ignored(e.Path, e.IsDir()) {
			sum.Ignored++
			return fs.SkipDir
		}
		if e.IsDir() {
			loadIgnore(root, &ig, e.Path)
		}
		return fn(e)
	})
	sum.WalkSummary = ws
	return start, sum, err
}

// loadIgnore reads dir's .gitignore through the confinement, if it has one. A .gitignore
// that cannot be read (a link, a pipe, gone) is taken as absent.
func loadIgnore(root *confine.Root, ig *ignores, dir string) {
	name := ".gitignore"
	if dir != "." {
		name = dir + "/.gitignore"
	}
	f, _, err := root.Open("", name)
	if err != nil {
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return
	}
	ig.add(parseIgnore(dir, data))
}

// splitRel splits a workspace-relative path into components; "." has none.
func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// joinRel joins components into a workspace-relative path.
func joinRel(comps []string) string {
	if len(comps) == 0 {
		return "."
	}
	return strings.Join(comps, "/")
}
