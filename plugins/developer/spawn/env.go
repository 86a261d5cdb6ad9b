package spawn

import (
	"path/filepath"
	"strings"
)

// Owner is what the plugin takes from the owner's own environment: the captured PATH and the
// few variables a program needs to behave as it does in the owner's terminal. Every field is
// a plain value; an empty one is left out of the environment.
type Owner struct {
	// Path is PATH as captured from the owner's login shell when the workspace was approved.
	Path string
	// Home is HOME.
	Home string
	// User is USER.
	User string
	// Lang is LANG.
	Lang string
	// LCAll is LC_ALL.
	LCAll string
	// Term is TERM.
	Term string
	// TmpDir is TMPDIR.
	TmpDir string
	// Shell is SHELL. It is a value programs read; nothing here runs it.
	Shell string
}

// Capture reads the owner's values from environ (in os.Environ's "NAME=value" form, for
// example the output of the owner's login shell), once. As getenv does, the first entry of a
// name wins. Nothing else in environ is looked at.
func Capture(environ []string) Owner {
	var o Owner
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		switch name {
		case "PATH":
			o.Path = value
		case "HOME":
			o.Home = value
		case "USER":
			o.User = value
		case "LANG":
			o.Lang = value
		case "LC_ALL":
			o.LCAll = value
		case "TERM":
			o.Term = value
		case "TMPDIR":
			o.TmpDir = value
		case "SHELL":
			o.Shell = value
		}
	}
	return o
}

// Env returns the environment the plugin builds for a command: PATH, HOME, USER, LANG,
// LC_ALL, TERM, TMPDIR and SHELL from o, in that order, each only when it is not empty, and
// CI=1 — and nothing else. PATH keeps only its absolute entries: an empty or relative entry
// would make a program look for other programs in the directory it runs in, which is the
// workspace. A value holding a NUL byte cannot be passed and is left out.
func Env(o Owner) []string {
	env := make([]string, 0, 9)
	add := func(name, value string) {
		if value == "" || strings.IndexByte(value, 0) >= 0 {
			return
		}
		env = append(env, name+"="+value)
	}
	add("PATH", absolutePath(o.Path))
	add("HOME", o.Home)
	add("USER", o.User)
	add("LANG", o.Lang)
	add("LC_ALL", o.LCAll)
	add("TERM", o.Term)
	add("TMPDIR", o.TmpDir)
	add("SHELL", o.Shell)
	return append(env, "CI=1")
}

// absolutePath keeps the absolute entries of a PATH value, in order.
func absolutePath(path string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// lookup returns the value of name in env as the spawned program will see it: os/exec keeps
// only the last entry of a name, so the last one wins here too.
func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if n, v, ok := strings.Cut(env[i], "="); ok && n == name {
			return v
		}
	}
	return ""
}
