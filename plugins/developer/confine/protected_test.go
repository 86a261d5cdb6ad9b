package confine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// homeBundle is a workspace placed at the owner's home, above every protected path.
type homeBundle struct {
	home string
	data string // buddi's data directory, inside the home here
	root *Root
}

func setupHome(t *testing.T) *homeBundle {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	b := &homeBundle{home: home, data: filepath.Join(home, "buddi-data")}
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), "key", 0o600)
	writeFile(t, filepath.Join(home, ".aws", "credentials"), "aws", 0o600)
	writeFile(t, filepath.Join(home, ".bashrc"), "# rc", 0o644)
	writeFile(t, filepath.Join(home, ".config", "gh", "hosts.yml"), "token", 0o600)
	writeFile(t, filepath.Join(home, ".config", "other", "x"), "x", 0o644)
	writeFile(t, filepath.Join(home, ".sshx"), "not protected", 0o644)
	writeFile(t, filepath.Join(home, "proj", "a.txt"), "a", 0o644)
	writeFile(t, filepath.Join(b.data, "vault.db"), "vault", 0o600)
	root, err := New(home, Options{Home: home, Protected: []string{b.data}})
	if err != nil {
		t.Fatal(err)
	}
	b.root = root
	return b
}

func protectedAs(display string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if got := errorAs[*ProtectedError](t, err).Protected; got != display {
			t.Errorf("got protected %q, want %q", got, display)
		}
	}
}

// TestSeedProtectedList pins the list to seed 000 §2: every path it names is there, and
// the shell rc files of the common shells.
func TestSeedProtectedList(t *testing.T) {
	t.Parallel()
	got := HomeProtected()
	for _, want := range []string{
		".ssh", ".aws", ".gnupg", ".npmrc", ".netrc", ".gitconfig", ".config/gh",
		"Library/Keychains", ".buddi",
		".profile", ".bashrc", ".bash_profile", ".bash_login", ".zshrc", ".zshenv", ".zprofile",
		".zlogin", ".cshrc", ".tcshrc", ".kshrc", ".config/fish",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("HomeProtected() lacks %q", want)
		}
	}
}

func TestProtectedWithWorkspaceAtHome(t *testing.T) {
	t.Parallel()
	b := setupHome(t)
	tests := []struct {
		name, cwd, path string
		display         string
	}{
		{"ssh key", "", ".ssh/id_ed25519", "~/.ssh"},
		{"ssh dir", "", ".ssh", "~/.ssh"},
		{"aws by dotdot", "", "proj/../.aws/credentials", "~/.aws"},
		{"aws from cwd", "proj", "../.aws/credentials", "~/.aws"},
		{"rc file", "", ".bashrc", "~/.bashrc"},
		{"rc file not there yet", "", ".zshenv", "~/.zshenv"},
		{"npmrc not there yet", "", ".npmrc", "~/.npmrc"},
		{"gh from cwd", ".config", "gh/hosts.yml", "~/.config/gh"},
		{"absolute", "", filepath.Join(b.home, ".netrc"), "~/.netrc"},
		{"through protected and out again", "", ".ssh/../proj/a.txt", "~/.ssh"},
		{"buddi data dir", "", "buddi-data/vault.db", b.data},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := b.root.Resolve(tt.cwd, tt.path)
			protectedAs(tt.display)(t, err)
			_, _, err = b.root.Open(tt.cwd, tt.path)
			protectedAs(tt.display)(t, err)
			_, err = b.root.Write(tt.cwd, tt.path, []byte("owned"))
			protectedAs(tt.display)(t, err)
		})
	}
	// Nothing was written: the rc file is as it was and the absent ones are still absent.
	if got := readFile(t, filepath.Join(b.home, ".bashrc")); got != "# rc" {
		t.Errorf("~/.bashrc is now %q", got)
	}
	for _, name := range []string{".zshenv", ".npmrc", ".netrc"} {
		if _, err := os.Lstat(filepath.Join(b.home, name)); !os.IsNotExist(err) {
			t.Errorf("~/%s: got %v, want it absent", name, err)
		}
	}
	// Every path of the list, and anything under it, whatever exists.
	for _, rel := range HomeProtected() {
		for _, p := range []string{rel, rel + "/x"} {
			if _, err := b.root.Resolve("", p); !IsRefusal(err) {
				t.Errorf("%s: got %v, want a refusal", p, err)
			}
		}
	}
}

func TestProtectedNeighboursAllowed(t *testing.T) {
	t.Parallel()
	b := setupHome(t)
	for _, p := range []string{".sshx", ".config/other/x", "proj/a.txt", ".config"} {
		if _, err := b.root.Resolve("", p); err != nil {
			t.Errorf("%s: got %v, want no error", p, err)
		}
	}
}

// TestProtectedThroughLink: ~/.aws is a link to where the credentials really are; a
// workspace placed there still refuses them.
func TestProtectedThroughLink(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	real := filepath.Join(base, "vault", "aws")
	writeFile(t, filepath.Join(real, "credentials"), "aws", 0o600)
	symlink(t, real, filepath.Join(home, ".aws"))
	root, err := New(filepath.Join(base, "vault"), Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	_, err = root.Resolve("", "aws/credentials")
	protectedAs("~/.aws")(t, err)
}

// TestProtectedDefaultHome: the zero Options protect the current user's home.
func TestProtectedDefaultHome(t *testing.T) {
	t.Parallel()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	r, err := New(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Protected(), filepath.Join(filepath.Clean(home), ".ssh")) {
		t.Errorf("got %v, want ~/.ssh among them", r.Protected())
	}
}
