package developer

import (
	"slices"
	"strings"
	"testing"
)

// TestParseConfigList reads git's own report, and refuses anything else.
func TestParseConfigList(t *testing.T) {
	t.Parallel()
	out := "local\x00file:/r/.git/config\x00core.bare\nfalse\x00" +
		"local\x00file:/r/.git/../inc.cfg\x00filter.a.b=c.clean\ntouch x\x00" +
		"local\x00file:/r/.git/config\x00novalue.key\x00" +
		"command\x00command line:\x00filter.x.required\ntrue\x00"
	got, err := parseConfigList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []configEntry{
		{scope: "local", origin: "file:/r/.git/config", key: "core.bare", value: "false", hasValue: true},
		{scope: "local", origin: "file:/r/.git/../inc.cfg", key: "filter.a.b=c.clean", value: "touch x", hasValue: true},
		{scope: "local", origin: "file:/r/.git/config", key: "novalue.key"},
		{scope: "command", origin: "command line:", key: "filter.x.required", value: "true", hasValue: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	cfg := gitConfig{entries: got}
	off := cfg.filtersOff()
	for _, kv := range [][2]string{{"filter.a.b=c.clean", ""}, {"filter.a.b=c.required", "false"}, {"filter.x.process", ""}} {
		if !slices.Contains(off, kv) {
			t.Errorf("filtersOff lacks %q: %q", kv, off)
		}
	}
	if err := (&gitConfig{gitDirs: []string{"/r/.git"}, entries: got}).fromRepository("/r"); err == nil || !strings.Contains(err.Error(), "/r/inc.cfg") {
		t.Errorf("an include from the working tree: got %v", err)
	}
	for _, bad := range []string{
		"local\x00file:x\x00core.bare\nfalse",         // no final NUL
		"local\x00file:x\x00",                         // a short entry
		"local\x00file:x\x00nodot\x00",                // a key with no section
		"local\x00file:x\x00Core.bare\x00",            // not as git prints it
		"\x00file:x\x00core.bare\x00",                 // no scope
		"local\x00\x00core.bare\x00",                  // no origin
		"local\x00file:x\x00core.\x00",                // no name
		"local\x00file:x\x00filter.a\nb.clean\nx\x00", // a newline in the key... is the value's
	} {
		if got, err := parseConfigList([]byte(bad)); err == nil && !(len(got) == 1 && got[0].key == "filter.a" && got[0].value == "b.clean\nx") {
			t.Errorf("%q: got %+v, want an error", bad, got)
		}
	}
}

// FuzzParseConfigList: the parser never panics; what it accepts has a scope, an origin and
// a key with a section and a name; and for every filter driver named in it, each command
// (clean, smudge, process) is switched off and required is false.
func FuzzParseConfigList(f *testing.F) {
	f.Add([]byte("local\x00file:/r/.git/config\x00filter.evil.clean\ntouch x\x00"))
	f.Add([]byte("local\x00file:/r/.git/config\x00novalue.key\x00command\x00command line:\x00a.b\nc\x00"))
	f.Add([]byte("local\x00file:/r/.git/config\x00filter.a.b.c.process\n\x00"))
	f.Add([]byte("worktree\x00file:x\x00filter..clean\nx\x00"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, out []byte) {
		entries, err := parseConfigList(out)
		if err != nil {
			return
		}
		off := (&gitConfig{entries: entries}).filtersOff()
		for _, e := range entries {
			if e.scope == "" || e.origin == "" || !strings.Contains(e.key, ".") {
				t.Fatalf("accepted %+v", e)
			}
			rest, ok := strings.CutPrefix(e.key, "filter.")
			if !ok {
				continue
			}
			i := strings.LastIndexByte(rest, '.')
			if i <= 0 {
				continue
			}
			d := rest[:i]
			for _, kv := range [][2]string{{"filter." + d + ".clean", ""}, {"filter." + d + ".smudge", ""}, {"filter." + d + ".process", ""}, {"filter." + d + ".required", "false"}} {
				if !slices.Contains(off, kv) {
					t.Fatalf("the driver %q of %q is not switched off (%q): %q", d, e.key, kv, off)
				}
			}
		}
	})
}
