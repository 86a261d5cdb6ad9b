package developer

import (
	"path"
	"strings"
)

// This file reads .gitignore files for developer.list and developer.search (§4: "a tree,
// ignoring what .gitignore ignores"), following gitignore(5): blank lines and # comments are
// skipped, trailing unescaped spaces dropped, ! negates, a trailing / matches directories
// only, a pattern with a slash at its start or middle is relative to the file's directory
// and one without matches at any depth below it, * ? and [...] match within one component,
// and ** matches any number of components. The last matching pattern decides, and a
// deeper file's patterns come after a shallower one's. A directory that is ignored is not
// entered, so nothing under it can be re-included, as in git. Only .gitignore files inside
// the workspace are read: not .git/info/exclude, nor the owner's global excludes file, which
// lives outside the workspace.

// maxIgnoreFile bounds how much of one .gitignore file is read.
const maxIgnoreFile = 256 << 10

// ignoreRule is one pattern line.
type ignoreRule struct {
	segs    []string // the pattern's components; "**" stands for any number of them
	negate  bool
	dirOnly bool
}

// ignoreFile is one .gitignore: the directory it sits in (workspace-relative, "." for the
// root) and its rules in order.
type ignoreFile struct {
	base  string
	rules []ignoreRule
}

// parseIgnore reads the patterns of a .gitignore in directory base.
func parseIgnore(base string, data []byte) ignoreFile {
	f := ignoreFile{base: base}
	for line := range strings.SplitSeq(string(data), "\n") {
		if r, ok := parseIgnoreLine(line); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

// parseIgnoreLine reads one pattern line; ok is false for a blank line or a comment.
func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return ignoreRule{}, false
	}
	var r ignoreRule
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimLeft(line, "/")
	for s := range strings.SplitSeq(line, "/") {
		if s == "" {
			continue
		}
		s = strings.ReplaceAll(s, "[!", "[^") // fnmatch's negated class, in path.Match's spelling
		if s == "**" && len(r.segs) > 0 && r.segs[len(r.segs)-1] == "**" {
			continue
		}
		r.segs = append(r.segs, s)
	}
	if len(r.segs) == 0 {
		return ignoreRule{}, false
	}
	if !anchored && r.segs[0] != "**" {
		r.segs = append([]string{"**"}, r.segs...)
	}
	return r, true
}

// trimTrailingSpaces drops trailing spaces that are not escaped with a backslash.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") {
		body := s[:len(s)-1]
		backslashes := len(body) - len(strings.TrimRight(body, `\`))
		if backslashes%2 == 1 {
			return s
		}
		s = body
	}
	return s
}

// match reports whether the rule matches the path given as its components relative to the
// rule's file.
func (r ignoreRule) match(comps []string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	return matchComponents(r.segs, comps)
}

// matchComponents matches pattern components against path components.
func matchComponents(pat, comps []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return len(comps) > 0 // "dir/**" matches what is inside dir, not dir
			}
			for i := 0; i <= len(comps); i++ {
				if matchComponents(rest, comps[i:]) {
					return true
				}
			}
			return false
		}
		if len(comps) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], comps[0]); err != nil || !ok {
			return false
		}
		pat, comps = pat[1:], comps[1:]
	}
	return len(comps) == 0
}

// ignores is the .gitignore files in force during a walk, by directory.
type ignores struct {
	files map[string]ignoreFile
}

// add records the .gitignore of directory base.
func (ig *ignores) add(f ignoreFile) {
	if len(f.rules) == 0 {
		return
	}
	if ig.files == nil {
		ig.files = map[string]ignoreFile{}
	}
	ig.files[f.base] = f
}

// ignored reports whether the workspace-relative path rel is ignored: the last matching
// rule of the deepest file that has one decides, files applied from the root down.
func (ig *ignores) ignored(rel string, isDir bool) bool {
	if len(ig.files) == 0 || rel == "." || rel == "" {
		return false
	}
	comps := strings.Split(rel, "/")
	ignored := false
	// The files that apply are those of rel's ancestors: ".", comps[0], comps[0]/comps[1], …
	for depth := 0; depth < len(comps); depth++ {
		base := "."
		if depth > 0 {
			base = strings.Join(comps[:depth], "/")
		}
		f, ok := ig.files[base]
		if !ok {
			continue
		}
		sub := comps[depth:]
		for _, r := range f.rules {
			if r.match(sub, isDir) {
				ignored = !r.negate
			}
		}
	}
	return ignored
}
