//go:build linux

package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzValidate: whatever the paths, a policy Validate accepts has every path absolute and
// clean, no writable or read-only path at, inside or holding Home or a Hidden path, and no
// writable path inside another.
func FuzzValidate(f *testing.F) {
	f.Add("/home/o/.buddi", "/home/o/src/app", "/home/o/.npm", "/home/o/src/app/.husky", "/home/o/.ssh")
	f.Add("/home/o/.buddi", "/home/o", "", "", "")
	f.Add("/a/b", "/a/bc", "/a/b/../c", "/tmp", "/a/bc/x")
	f.Fuzz(func(t *testing.T, home, ws, writable, readOnly, hidden string) {
		p := Policy{Home: home, Workspace: ws}
		if writable != "" {
			p.Writable = strings.Split(writable, ",")
		}
		if readOnly != "" {
			p.ReadOnly = strings.Split(readOnly, ",")
		}
		if hidden != "" {
			p.Hidden = strings.Split(hidden, ",")
		}
		if p.Validate() != nil {
			return
		}
		all := append(append(append([]string{p.Home, p.Workspace}, p.Writable...), p.ReadOnly...), p.Hidden...)
		for _, path := range all {
			if !filepath.IsAbs(path) || filepath.Clean(path) != path || path == "/" || strings.ContainsRune(path, 0) {
				t.Fatalf("accepted %q in %+v", path, p)
			}
		}
		secret := append([]string{p.Home}, p.Hidden...)
		kept := append(append([]string{p.Workspace}, p.Writable...), p.ReadOnly...)
		for _, k := range kept {
			for _, s := range secret {
				if within(k, s) || within(s, k) {
					t.Fatalf("accepted %q beside the hidden %q in %+v", k, s, p)
				}
			}
			if isSystem(k) {
				t.Fatalf("accepted the system path %q in %+v", k, p)
			}
		}
		writ := append([]string{p.Workspace}, p.Writable...)
		for i, a := range writ {
			for j, b := range writ {
				if i != j && within(a, b) {
					t.Fatalf("accepted %q inside %q in %+v", a, b, p)
				}
			}
		}
	})
}

// FuzzParseFailure: a launcher's line never panics the parser, and a well-formed one comes
// back as it was written.
func FuzzParseFailure(f *testing.F) {
	f.Add("mounts", "cover /tmp: operation not permitted")
	f.Add("", ": :")
	f.Fuzz(func(t *testing.T, stage, reason string) {
		_ = parseFailure(stage + reason)
		if stage == "" || strings.ContainsAny(stage, ": \n\r\t\v\f") || strings.ContainsAny(reason, "\n\r") ||
			strings.TrimSpace(reason) != reason || reason == "" {
			return
		}
		got := parseFailure("sandbox: " + stage + ": " + reason + "\n")
		if got.Stage != stage || got.Reason != reason {
			t.Fatalf("parse(%q, %q) = %+v", stage, reason, got)
		}
	})
}
