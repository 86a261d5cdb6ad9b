package runlist

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// This file is §5's two allowances that "turn on a file being there": an install that only
// reproduces the lockfile, and npx of the project's own binary.

// FS is what the two allowances need to know of the workspace's files. Decide calls it only
// with slash-separated paths relative to the workspace root that neither climb nor begin
// with /.
type FS interface {
	// Exists reports whether a file is at rel (following a link, as npx and the package
	// managers would).
	Exists(rel string) bool
}

// DirFS returns an FS over the directory root on the operating system's filesystem.
func DirFS(root string) FS { return dirFS(root) }

// dirFS is DirFS's FS.
type dirFS string

// Exists implements FS with os.Stat.
func (d dirFS) Exists(rel string) bool {
	if !fs.ValidPath(rel) {
		return false
	}
	st, err := os.Stat(filepath.Join(string(d), filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	return !st.IsDir()
}

var _ FS = dirFS("")

// errNoFS is the finding's cause when Input.FS is nil.
var errNoFS = errors.New("runlist: no workspace filesystem to look in")

// allowed is the run list's answer for an admitted command.
type allowed struct {
	rule   Rule
	reason string
}

// installForm reports whether argv is a lockfile install's shape for its program: the
// program, one of its install subcommands (or none, for yarn), then only flags and words.
func installForm(argv []string) (install, string, []string, bool) {
	spec, ok := installs[argv[0]]
	if !ok {
		return install{}, "", nil, false
	}
	args := argv[1:]
	if len(args) > 0 && slices.Contains(spec.subs, args[0]) {
		return spec, args[0], args[1:], true
	}
	if spec.bare && (len(args) == 0 || strings.HasPrefix(args[0], "-")) {
		return spec, "", args, true
	}
	return install{}, "", nil, false
}

// lockfileInstall decides an install: "Allowed when the matching lockfile is in the
// command's directory; npm install <package> names something new and stays a card."
func lockfileInstall(spec install, argv []string, sub string, rest []string, pl place, files FS) (*allowed, *finding) {
	display := argv[0]
	if sub != "" {
		display += " " + sub
	}
	rd := &reader{place: pl, display: display}
	for _, w := range rest {
		if strings.HasPrefix(w, "-") {
			if !slices.Contains(spec.flags, w) {
				flag, _, _ := strings.Cut(w, "=")
				return nil, rd.failf(RuleInstallFlag, flag, w,
					"%s: %s is not one of the frozen, offline or no-scripts flags (%s), so this install may do more than reproduce the lockfile",
					display, flag, strings.Join(spec.flags, " "))
			}
			continue
		}
		return nil, rd.failf(RuleInstallPackage, "", w,
			"%s %s installs packages this machine did not have", display, w)
	}
	if files == nil {
		return nil, rd.failf(RuleLockfile, "", "",
			"%s: %v, so the lockfile cannot be confirmed", display, errNoFS)
	}
	for _, lf := range spec.lockfiles {
		if files.Exists(path.Join(pl.rel, lf)) {
			return &allowed{rule: RuleLockfileInstall, reason: fmt.Sprintf(
				"%s only reproduces the lockfile %s in %s", display, lf, where(pl.rel))}, nil
		}
	}
	return nil, rd.failf(RuleLockfile, "", "",
		"%s: no %s in %s, the command's directory, so it would not only reproduce a lockfile",
		display, strings.Join(spec.lockfiles, " or "), where(pl.rel))
}

// localNpx decides "npx of the project's own binary": allowed when
// node_modules/.bin/<name> exists between the command's directory and the workspace
// root, with arguments "none absolute, none climbing with .., none starting at ~".
func localNpx(argv []string, pl place, files FS) (*allowed, *finding) {
	rd := &reader{place: pl, display: "npx"}
	if len(argv) < 2 {
		return nil, rd.failf(RuleNpx, "", "", "npx with no binary named is not on the run list")
	}
	bin := argv[1]
	if strings.HasPrefix(bin, "-") {
		flag, _, _ := strings.Cut(bin, "=")
		return nil, rd.failf(RuleUnknownFlag, flag, bin,
			"npx: %s is not on the run list, where npx runs only the project's own binary named first", flag)
	}
	if !isBinName(bin) {
		return nil, rd.failf(RuleNpx, "", bin,
			"npx: %q is not a plain binary name ([A-Za-z0-9._-]+), so npx may fetch it", bin)
	}
	rd.display = "npx " + bin
	if files == nil {
		return nil, rd.failf(RuleNpxMissing, "", bin,
			"%s: %v, so the project's own binary cannot be confirmed", rd.display, errNoFS)
	}
	found := ""
	for dir := pl.rel; ; dir = path.Dir(dir) {
		rel := path.Join(dir, "node_modules/.bin", bin)
		if files.Exists(rel) {
			found = rel
			break
		}
		if dir == "." {
			break
		}
	}
	if found == "" {
		span := fmt.Sprintf("between %q and the workspace root", pl.rel)
		if pl.rel == "." {
			span = "in the workspace root"
		}
		return nil, rd.failf(RuleNpxMissing, "", bin,
			"%s: no node_modules/.bin/%s %s, so npx would fetch it", rd.display, bin, span)
	}
	for _, a := range argv[2:] {
		for _, r := range readings(a) {
			switch {
			case strings.HasPrefix(r, "/"):
				return nil, rd.failf(RulePathAbsolute, flagOf(a), a,
					"%s: the argument %q is absolute, and npx's arguments stay inside the workspace", rd.display, a)
			case climbs(r):
				return nil, rd.failf(RulePathClimbs, flagOf(a), a,
					"%s: the argument %q climbs with .., and npx's arguments stay inside the workspace", rd.display, a)
			}
		}
	}
	return &allowed{rule: RuleLocalNpx, reason: fmt.Sprintf(
		"%s runs the project's own %q", rd.display, found)}, nil
}

// isBinName reports whether s is a name node_modules/.bin can hold and npx cannot read as
// a package spec, a version, a path or a URL.
func isBinName(s string) bool {
	if s == "" || s[0] == '.' || s[0] == '-' {
		return false
	}
	return matchSet(s, lowerDigits+upper+"._-")
}

// flagOf returns the flag part of a dash word, or "".
func flagOf(w string) string {
	if !strings.HasPrefix(w, "-") {
		return ""
	}
	f, _, _ := strings.Cut(w, "=")
	return f
}

// readings are the ways a word may be read as a path: itself, whatever follows each =
// (--out=/x, key=/x), and what follows a single-dash letter (-o/x).
func readings(w string) []string {
	out := []string{w}
	for i := 0; i < len(w); i++ {
		if w[i] == '=' {
			out = append(out, w[i+1:])
		}
	}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' {
		out = append(out, w[2:])
	}
	return out
}

// where names a workspace-relative directory in a reason.
func where(rel string) string {
	if rel == "." {
		return "the workspace root"
	}
	return fmt.Sprintf("%q", rel)
}
