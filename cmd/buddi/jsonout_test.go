package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"buddi/version"
)

// noJSON are the commands without --json, and why; docs/CLI.md lists each with its reason.
var noJSON = map[string]string{
	"init":       "a conversation on the terminal",
	"serve":      "runs buddi until stopped",
	"chat":       "a conversation on the terminal",
	"mcp":        "speaks MCP on stdio",
	"completion": "prints a shell script",
	"help":       "prints help",
}

// leaves is every command a person can run (hidden helpers left out), by full name.
func leaves(t *testing.T) []*kong.Node {
	t.Helper()
	var c cli
	p, err := kong.New(&c, kong.Name("buddi"))
	if err != nil {
		t.Fatal(err)
	}
	return p.Model.Leaves(true)
}

// Every command that prints something has --json, and a new command without it fails here
// until it gets one or is listed (with why) in noJSON and docs/CLI.md.
func TestEveryCommandHasJSON(t *testing.T) {
	all := leaves(t)
	if len(all) < 60 {
		t.Fatalf("only %d commands: the walk missed some", len(all))
	}
	seen := map[string]bool{}
	for _, n := range all {
		name := n.Path()
		seen[name] = true
		has := false
		for _, f := range n.Flags {
			has = has || (f.Name == "json" && f.IsBool())
		}
		_, excluded := noJSON[name]
		switch {
		case !has && !excluded:
			t.Errorf("buddi %s has no --json: give it one (see jsonout.go), or list it in noJSON and docs/CLI.md with why", name)
		case has && excluded:
			t.Errorf("buddi %s has --json but is listed in noJSON", name)
		}
	}
	for name := range noJSON {
		if !seen[name] {
			t.Errorf("noJSON lists buddi %s, which is no command", name)
		}
	}
}

// docs/CLI.md names every command, and each one without --json.
func TestCLIDocNamesEveryCommand(t *testing.T) {
	raw, err := os.ReadFile("../../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, n := range leaves(t) {
		if !strings.Contains(doc, "`buddi "+n.Path()) {
			t.Errorf("docs/CLI.md does not mention `buddi %s`", n.Path())
		}
	}
	_, without, ok := strings.Cut(doc, "## Commands without --json")
	if !ok {
		t.Fatal("docs/CLI.md has no section \"## Commands without --json\"")
	}
	without, _, _ = strings.Cut(without, "\n## ")
	for name := range noJSON {
		if !strings.Contains(without, "`buddi "+name+"`") {
			t.Errorf("docs/CLI.md's commands without --json do not list `buddi %s`", name)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("version --json: exit %d\n%s", code, errb.String())
	}
	var got struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Version != version.Version {
		t.Fatalf("version --json printed %q (%v)", out.String(), err)
	}
	out.Reset()
	if code := run([]string{"version"}, &out, &errb); code != 0 || out.String() != "buddi "+version.Version+"\n" {
		t.Fatalf("version: exit %d, %q", code, out.String())
	}
}
