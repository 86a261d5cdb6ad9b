package developer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// resultPattern is a search result line: path:line: text.
var resultPattern = regexp.MustCompile(`^[^ ].*:[0-9]+: `)

// resultLines returns the result lines of a search's text.
func resultLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n")[1:] {
		if resultPattern.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// engineName is which search a bundle's developer.search uses.
func engineName(b *testBundle) string {
	if b.deps.LookPath != nil {
		return "the built-in search" // noRipgrep
	}
	return "ripgrep"
}

// TestSearch runs the same searches with ripgrep and with the built-in search, and wants
// the same results from both: .gitignore applied, node_modules and .git left out, links
// stepped over and counted, binary files not searched, the bounds kept.
func TestSearch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeFile(t, filepath.Join(b.ws, "bin.dat"), "needle\x00binary\n")
	writeFile(t, filepath.Join(b.ws, ".git", "config"), "needle in git\n")
	writeFile(t, filepath.Join(b.ws, "crlf.txt"), "needle crlf\r\nx\r\n")
	writeFile(t, filepath.Join(b.ws, "long.txt"), "needle "+strings.Repeat("y", 20000)+"\n")
	var many strings.Builder
	for i := range 300 {
		fmt.Fprintf(&many, "match %d\n", i)
	}
	writeFile(t, filepath.Join(b.ws, "many", "m.txt"), many.String())

	longText := "long.txt:1: needle " + strings.Repeat("y", maxSearchText-len("needle ")) + " …"
	tests := []struct {
		name string
		args string
		want []string
		says []string
	}{
		{
			name: "plain",
			args: `{"query":"needle"}`,
			want: []string{"crlf.txt:1: needle crlf", longText, "notes.md:1: a needle here", "notes.md:3: needle again", "src/deep/x.txt:1: needle deep"},
			says: []string{"5 matches in 4 files", "Stepped over 3 symbolic links", "Left out 4 entries"},
		},
		{
			name: "regex",
			args: `{"query":"needle (here|again)$","regex":true}`,
			want: []string{"notes.md:1: a needle here", "notes.md:3: needle again"},
		},
		{
			name: "a plain query is not a pattern",
			args: `{"query":"needle (here|again)"}`,
			want: nil,
			says: []string{"No match"},
		},
		{
			name: "glob",
			args: `{"query":"needle","glob":"*.txt"}`,
			want: []string{"crlf.txt:1: needle crlf", longText, "src/deep/x.txt:1: needle deep"},
		},
		{
			name: "anchored glob",
			args: `{"query":"needle","glob":"src/**/*.txt"}`,
			want: []string{"src/deep/x.txt:1: needle deep"},
		},
		{
			name: "negated glob",
			args: `{"query":"needle","glob":"!*.txt"}`,
			want: []string{"notes.md:1: a needle here", "notes.md:3: needle again"},
		},
		{
			name: "a directory",
			args: `{"query":"needle","path":"src"}`,
			want: []string{"src/deep/x.txt:1: needle deep"},
		},
		{
			name: "a file the .gitignore ignores, asked for by name",
			args: `{"query":"needle","path":"debug.log"}`,
			want: []string{"debug.log:1: needle log"},
		},
		{
			name: "the result bound",
			args: `{"query":"match","path":"many"}`,
			says: []string{"200 matches in 1 file", "Stopped at the bound of 200 results"},
		},
	}
	results := map[string][][]string{}
	for _, engine := range b.engines(t) {
		name := engineName(engine)
		for _, tt := range tests {
			text := engine.mustRun(t, call("search", tt.args), nil)
			got := resultLines(text)
			results[tt.name] = append(results[tt.name], got)
			if !strings.Contains(text, "("+name+")") {
				t.Errorf("%s, %s: the result does not name its engine:\n%s", name, tt.name, text)
			}
			if tt.want != nil || tt.name != "the result bound" {
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s, %s: got\n%q\nwant\n%q\n%s", name, tt.name, got, tt.want, text)
				}
			}
			for _, s := range tt.says {
				if !strings.Contains(text, s) {
					t.Errorf("%s, %s: the result does not say %q:\n%s", name, tt.name, s, text)
				}
			}
		}
	}
	for name, got := range results {
		if len(got) == 2 && !slices.Equal(got[0], got[1]) {
			t.Errorf("%s: the engines differ:\nbuilt-in %q\nripgrep  %q", name, got[0], got[1])
		}
	}
	if got := results["the result bound"]; len(got[0]) != maxSearchResults || got[0][0] != "many/m.txt:1: match 0" {
		t.Errorf("the result bound: got %d results starting %q", len(got[0]), got[0][:1])
	}
}

// TestSearchRefusals: a regular expression that does not compile and a glob that climbs
// or roots are refused before anything runs.
func TestSearchRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tt := range []struct{ args, want string }{
		{`{"query":"(","regex":true}`, "not a regular expression"},
		{`{"query":"x","glob":"../*.txt"}`, "climb"},
		{`{"query":"x","glob":"/etc/*"}`, "may not begin with /"},
		{`{"query":"x","glob":"!../x"}`, "climb"},
		{`{"query":"x","path":"missing"}`, "does not exist"},
	} {
		if _, err := b.describe(t, call("search", tt.args)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Describe got %v, want %q", tt.args, err, tt.want)
		}
		b.mustFail(t, call("search", tt.args), nil, tt.want)
	}
}

// TestList: a tree with .gitignore applied, node_modules and .git left out, links stepped
// over and counted, depth and entries bounded.
func TestList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeFile(t, filepath.Join(b.ws, ".git", "HEAD"), "x")
	writeFile(t, filepath.Join(b.ws, "src", "deep", "deeper", "deepest.txt"), "x")
	text := b.mustRun(t, call("list", `{}`), nil)
	want := b.ws + " (8 entries, 3 levels deep):\n" +
		".gitignore  (13 B)\n" +
		"a.txt  (11 B)\n" +
		"notes.md  (32 B)\n" +
		"src/\n" +
		"  deep/\n" +
		"    deeper/\n" +
		"    x.txt  (12 B)\n" +
		"  main.go  (29 B)\n" +
		"Stepped over 3 symbolic links (links are never followed).\n" +
		"Left out 4 entries: node_modules, .git and what .gitignore ignores.\n" +
		"Directories 3 levels down were not entered."
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
	out := b.run(t, call("list", `{"path":"src","depth":1}`), nil)
	var data map[string]any
	if err := json.Unmarshal(out.Result.Data, &data); err != nil || data["entries"] != 2.0 || data["skipped_links"] != 0.0 {
		t.Errorf("got %s, %v", out.Result.Data, err)
	}
	if file := b.mustRun(t, call("list", `{"path":"a.txt"}`), nil); !strings.Contains(file, "is a file") {
		t.Errorf("got %q", file)
	}
	for i := range maxListEntries + 5 {
		writeFile(t, filepath.Join(b.ws, "big", fmt.Sprintf("f%04d", i)), "")
	}
	big := b.mustRun(t, call("list", `{"path":"big"}`), nil)
	if !strings.Contains(big, "Stopped at the bound of 1000 entries") || strings.Count(big, "\n") > maxListEntries+3 {
		t.Errorf("the list is not bounded: %d lines, ends %q", strings.Count(big, "\n"), big[max(0, len(big)-120):])
	}
}

// TestRead: numbered lines, bounded by lines and bytes, read on with from; binary files
// refused with their size.
func TestRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var lines strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	writeFile(t, filepath.Join(b.ws, "big.txt"), lines.String())
	first := b.mustRun(t, call("read", `{"path":"big.txt"}`), nil)
	if !strings.HasPrefix(first, filepath.Join(b.ws, "big.txt")+", lines 1–2000:\n     1\tline 1\n") ||
		!strings.HasSuffix(first, "  2000\tline 2000\n… the file goes on: read again with from=2001.") {
		t.Errorf("got %q … %q", first[:80], first[len(first)-80:])
	}
	rest := b.mustRun(t, call("read", `{"path":"big.txt","from":2001}`), nil)
	if !strings.Contains(rest, "lines 2001–2500 of 2500:") || !strings.HasSuffix(rest, "  2500\tline 2500") {
		t.Errorf("got %q", rest[:80])
	}
	some := b.mustRun(t, call("read", `{"path":"a.txt","from":2,"lines":1}`), nil)
	if want := filepath.Join(b.ws, "a.txt") + ", lines 2–2 of 2:\n     2\tbeta"; some != want {
		t.Errorf("got %q, want %q", some, want)
	}
	if past := b.mustRun(t, call("read", `{"path":"a.txt","from":9}`), nil); !strings.Contains(past, "has 2 lines; from=9 is past its end") {
		t.Errorf("got %q", past)
	}
	writeFile(t, filepath.Join(b.ws, "empty.txt"), "")
	if empty := b.mustRun(t, call("read", `{"path":"empty.txt"}`), nil); !strings.HasSuffix(empty, "is empty.") {
		t.Errorf("got %q", empty)
	}
	writeFile(t, filepath.Join(b.ws, "wide.txt"), strings.Repeat(strings.Repeat("w", 3000)+"\n", 100))
	wide := b.mustRun(t, call("read", `{"path":"wide.txt"}`), nil)
	if len(wide) > maxReadBytes+100*8+200 || !strings.Contains(wide, "cut at the 200 KB bound") {
		t.Errorf("got %d bytes ending %q", len(wide), wide[len(wide)-100:])
	}
	writeFile(t, filepath.Join(b.ws, "image.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	b.mustFail(t, call("read", `{"path":"image.png"}`), nil, "binary file (16 B, 16 bytes)")
	b.mustFail(t, call("read", `{"path":"src"}`), nil, "not a regular file")
	b.mustFail(t, call("read", `{"path":"missing.txt"}`), nil, "does not exist")
}
