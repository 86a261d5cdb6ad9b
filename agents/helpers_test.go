package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testBundle is a search path in temp directories: an examples tree and an owner's half.
type testBundle struct {
	examples  string // holds agents/ and skills/
	agentsDir string
	skillsDir string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	root := t.TempDir()
	return &testBundle{
		examples:  filepath.Join(root, "examples"),
		agentsDir: filepath.Join(root, "owner", "agents"),
		skillsDir: filepath.Join(root, "owner", "skills"),
	}
}

// example writes a file under the examples tree (rel like "agents/a.md").
func (b *testBundle) example(t *testing.T, rel, content string) string {
	t.Helper()
	return writeFile(t, filepath.Join(b.examples, rel), content)
}

// owner writes a file under the owner's agents directory.
func (b *testBundle) owner(t *testing.T, rel, content string) string {
	t.Helper()
	return writeFile(t, filepath.Join(b.agentsDir, rel), content)
}

// ownerSkill writes a file under the owner's skills directory.
func (b *testBundle) ownerSkill(t *testing.T, rel, content string) string {
	t.Helper()
	return writeFile(t, filepath.Join(b.skillsDir, rel), content)
}

func (b *testBundle) config() Config {
	return Config{Examples: os.DirFS(b.examples), ExamplesPath: b.examples, AgentsDir: b.agentsDir, SkillsDir: b.skillsDir}
}

func (b *testBundle) load(t *testing.T) *Catalog {
	t.Helper()
	c, err := Load(b.config())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// loadErr loads expecting failure and returns the problems.
func (b *testBundle) loadErr(t *testing.T) []Problem {
	t.Helper()
	return wantLoadError(t, func() error { _, err := Load(b.config()); return err })
}

func wantLoadError(t *testing.T, f func() error) []Problem {
	t.Helper()
	err := f()
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("got error %v, want a *LoadError", err)
	}
	return le.Problems
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// agentFile is a valid agent file with extra frontmatter lines.
func agentFile(id, handle string, extra ...string) string {
	lines := append([]string{"---", "id: " + id, `handle: "` + handle + `"`, "name: " + id}, extra...)
	return strings.Join(lines, "\n") + "\n---\nYou are " + id + ".\n"
}

// skillFile is a skill file with frontmatter lines.
func skillFile(frontmatter ...string) string {
	return "---\n" + strings.Join(frontmatter, "\n") + "\n---\nDo the thing well.\n"
}

// hasProblem reports whether a problem at path contains every piece.
func hasProblem(ps []Problem, path string, pieces ...string) bool {
	for _, p := range ps {
		if path != "" && p.Path != path {
			continue
		}
		ok := true
		for _, piece := range pieces {
			if !strings.Contains(p.Message, piece) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func ids(as []Agent) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

func skillNames(ss []Skill) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.Name+":"+string(s.Source))
	}
	return out
}
