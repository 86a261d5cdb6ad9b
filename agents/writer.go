package agents

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Draft is an agent file's contents, field by field: what platform.create_agent takes and
// what a plugin proposes. [Draft.Render] writes it as the file the owner reads.
type Draft struct {
	// ID is the agent's id (kebab case).
	ID string `json:"id"`
	// Handle is its handle, with or without the @.
	Handle string `json:"handle"`
	// Name is its display name.
	Name string `json:"name"`
	// Tools is its grant, in order.
	Tools []string `json:"tools,omitempty"`
	// Roles are the roles it claims.
	Roles []string `json:"roles,omitempty"`
	// Skills are the shared skills it names.
	Skills []string `json:"skills,omitempty"`
	// Language is a BCP 47 tag, or empty.
	Language string `json:"language,omitempty"`
	// TurnBudget is the most model turns a run may take; 0 declares none.
	TurnBudget int `json:"turn_budget,omitempty"`
	// IdleRollover is its idle rollover; 0 declares none.
	IdleRollover time.Duration `json:"-"`
	// Default makes it the default agent.
	Default bool `json:"default,omitempty"`
	// Persona is the file's body.
	Persona string `json:"persona"`
}

// DraftOf is the draft an agent's own file declares (its default: as written in the file,
// not as the catalogue resolved it).
func DraftOf(a Agent, declaredDefault bool) Draft {
	return Draft{ID: a.ID, Handle: a.Handle, Name: a.Name, Tools: slices.Clone(a.Tools), Roles: slices.Clone(a.Roles),
		Skills: slices.Clone(a.Skills), Language: a.Language, TurnBudget: a.TurnBudget, IdleRollover: a.IdleRollover,
		Default: declaredDefault, Persona: a.Persona}
}

// Render writes the draft as an agent file: YAML frontmatter in the catalogue's key order
// (the grant one tool a line), then the persona.
func (d Draft) Render() []byte {
	m := &yaml.Node{Kind: yaml.MappingNode}
	str := func(key, value string, style yaml.Style) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Style: style})
	}
	list := func(key string, items []string, style yaml.Style) {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: style}
		for _, it := range items {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: it})
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, seq)
	}
	str("id", d.ID, 0)
	str("handle", NormalizeHandle(d.Handle), yaml.DoubleQuotedStyle)
	str("name", d.Name, 0)
	list("tools", d.Tools, 0)
	if len(d.Tools) == 0 {
		m.Content[len(m.Content)-1].Style = yaml.FlowStyle
	}
	if len(d.Roles) > 0 {
		list("roles", d.Roles, yaml.FlowStyle)
	}
	if len(d.Skills) > 0 {
		list("skills", d.Skills, yaml.FlowStyle)
	}
	if d.Language != "" {
		str("language", d.Language, 0)
	}
	if d.TurnBudget > 0 {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "turn_budget"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(d.TurnBudget)})
	}
	if d.IdleRollover > 0 {
		str("idle_rollover", fmtDuration(d.IdleRollover), 0)
	}
	if d.Default {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "default"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	out, err := yaml.Marshal(m)
	if err != nil { // a mapping of plain scalars always marshals
		panic(fmt.Sprintf("agents: render a draft: %v", err))
	}
	return []byte("---\n" + string(out) + "---\n" + strings.TrimSpace(d.Persona) + "\n")
}

// Check parses a rendered agent file as the catalogue would, shape only (ids, handles, tool
// names, roles, numbers); every problem is named against path.
func Check(path string, data []byte) (Agent, error) {
	var ps problems
	a, ok := parseAgent(path, data, SourcePrivate, &ps)
	if !ok {
		return Agent{}, &LoadError{Problems: ps}
	}
	return a, nil
}

// SkillDraft is a skill file's contents: what platform.write_skill takes and a plugin proposes.
type SkillDraft struct {
	// Name is the skill's name, its file name without .md.
	Name string `json:"name"`
	// Description is one line on what it is for.
	Description string `json:"description,omitempty"`
	// Agents, for a shared skill, are the agents it loads for (ids or handles); empty loads
	// it for every agent.
	Agents []string `json:"agents,omitempty"`
	// Body is the procedure or knowledge, in markdown.
	Body string `json:"body"`
}

// Render writes the skill as its file: a frontmatter of description and agents (when set),
// then the body. It has no tools or tier key: a skill grants nothing.
func (s SkillDraft) Render() []byte {
	m := &yaml.Node{Kind: yaml.MappingNode}
	if s.Description != "" {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "description"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.Description})
	}
	if len(s.Agents) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, a := range s.Agents {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: a, Style: quoteAt(a)})
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "agents"}, seq)
	}
	body := strings.TrimSpace(s.Body) + "\n"
	if len(m.Content) == 0 {
		return []byte(body)
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("agents: render a skill: %v", err))
	}
	return []byte("---\n" + string(out) + "---\n" + body)
}

// quoteAt quotes a value that starts with @, which YAML would not take bare.
func quoteAt(s string) yaml.Style {
	if strings.HasPrefix(s, "@") {
		return yaml.DoubleQuotedStyle
	}
	return 0
}

// Change is files to write and paths to remove in the owner's directories, absolute.
type Change struct {
	// Writes are whole files by path; a file's directory is made as needed.
	Writes map[string][]byte
	// Removes are files or directories (removed with all they hold).
	Removes []string
}

// owned reports the owner's directory p is in ("agents" or "skills") and p relative to it,
// slash-separated; ok is false for a path outside both.
func (cfg Config) owned(p string) (root, rel string, ok bool) {
	p = filepath.Clean(p)
	for _, r := range []struct{ name, dir string }{{"agents", cfg.AgentsDir}, {"skills", cfg.SkillsDir}} {
		if r.dir == "" {
			continue
		}
		dir := filepath.Clean(r.dir)
		if rel, err := filepath.Rel(dir, p); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return r.name, filepath.ToSlash(rel), true
		}
	}
	return "", "", false
}

// checkChange refuses a change that reaches outside the owner's directories or into the
// examples.
func (cfg Config) checkChange(ch Change) error {
	paths := slices.Collect(func(yield func(string) bool) {
		for p := range ch.Writes {
			if !yield(p) {
				return
			}
		}
	})
	paths = append(paths, ch.Removes...)
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("agents: %s is not an absolute path", p)
		}
		if ex := cfg.ExamplesPath; ex != "" && filepath.IsAbs(ex) {
			if rel, err := filepath.Rel(filepath.Clean(ex), filepath.Clean(p)); err == nil && !strings.HasPrefix(rel, "..") {
				return fmt.Errorf("agents: %s is in the examples, which are never written", p)
			}
		}
		if _, _, ok := cfg.owned(p); !ok {
			return fmt.Errorf("agents: %s is outside the owner's agents and skills directories", p)
		}
	}
	return nil
}

// Try loads the catalogue as it would be after ch, without touching the disk: the same
// checks as [Load], so a change that would stop the catalogue from loading is refused before
// anything is written.
func Try(cfg Config, ch Change) (*Catalog, error) {
	if err := cfg.checkChange(ch); err != nil {
		return nil, err
	}
	cfg.overlay = &ch
	return Load(cfg)
}

// ownerFS is the file system of one of the owner's directories (root "agents" or "skills"),
// with a change laid over it when the config carries one.
func (cfg Config) ownerFS(root, dir string) fs.FS {
	base := os.DirFS(dir)
	if cfg.overlay == nil {
		return base
	}
	o := &overlayFS{base: base, files: map[string][]byte{}}
	for p, data := range cfg.overlay.Writes {
		if r, rel, ok := cfg.owned(p); ok && r == root {
			o.files[rel] = data
		}
	}
	for _, p := range cfg.overlay.Removes {
		if r, rel, ok := cfg.owned(p); ok && r == root {
			o.removed = append(o.removed, rel)
		}
	}
	return o
}

// overlayFS is a directory with some files replaced or added, and some paths removed. It
// answers what Load asks: ReadDir and ReadFile.
type overlayFS struct {
	base    fs.FS
	files   map[string][]byte // slash paths relative to the root
	removed []string
}

func (o *overlayFS) gone(name string) bool {
	for _, r := range o.removed {
		if name == r || strings.HasPrefix(name, r+"/") {
			if _, written := o.files[name]; !written {
				return true
			}
		}
	}
	return false
}

// Open opens a file of the base; a file only the overlay has is read with ReadFile.
func (o *overlayFS) Open(name string) (fs.File, error) {
	if _, ok := o.files[name]; ok || o.gone(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return o.base.Open(name)
}

// ReadFile reads a file as the change leaves it.
func (o *overlayFS) ReadFile(name string) ([]byte, error) {
	if data, ok := o.files[name]; ok {
		return slices.Clone(data), nil
	}
	if o.gone(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return fs.ReadFile(o.base, name)
}

// ReadDir lists a directory as the change leaves it, in name order.
func (o *overlayFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if o.gone(name) && name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	entries, err := fs.ReadDir(o.base, name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	byName := map[string]fs.DirEntry{}
	for _, e := range entries {
		if !o.gone(path.Join(name, e.Name())) {
			byName[e.Name()] = e
		}
	}
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	for p, data := range o.files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		first, deeper, _ := strings.Cut(rest, "/")
		if deeper != "" {
			if _, seen := byName[first]; !seen {
				byName[first] = fs.FileInfoToDirEntry(fakeInfo{name: first, dir: true})
			}
			continue
		}
		byName[first] = fs.FileInfoToDirEntry(fakeInfo{name: first, size: int64(len(data))})
	}
	if err != nil && len(byName) == 0 {
		return nil, err
	}
	out := make([]fs.DirEntry, 0, len(byName))
	for _, n := range sortedKeys(byName) {
		out = append(out, byName[n])
	}
	return out, nil
}

// fakeInfo describes a file or directory that exists only in an overlay.
type fakeInfo struct {
	name string
	size int64
	dir  bool
}

func (f fakeInfo) Name() string { return f.name }
func (f fakeInfo) Size() int64  { return f.size }
func (f fakeInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.dir }
func (f fakeInfo) Sys() any           { return nil }

// Applied is a change written to disk; Undo puts back what was there before.
type Applied struct {
	undo []func() error
	done []func()
}

// Apply writes ch to the owner's directories: each file whole or not at all (a hidden
// temporary file renamed over it, mode 0600, directories 0700), each removed path moved
// aside first. It refuses any path outside the owner's directories or in the examples.
// Call Commit once the result is wanted, or Undo to restore what was there.
func Apply(cfg Config, ch Change) (*Applied, error) {
	if err := cfg.checkChange(ch); err != nil {
		return nil, err
	}
	a := &Applied{}
	for _, p := range ch.Removes {
		if err := a.remove(p); err != nil {
			return nil, errors.Join(err, a.Undo())
		}
	}
	for _, p := range sortedKeys(ch.Writes) {
		if err := a.write(p, ch.Writes[p]); err != nil {
			return nil, errors.Join(err, a.Undo())
		}
	}
	return a, nil
}

// aside is a hidden sibling name for p, which the catalogue skips.
func aside(p, why string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+"."+why+"-"+hex.EncodeToString(b[:]))
}

func (a *Applied) remove(p string) error {
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	moved := aside(p, "removed")
	if err := os.Rename(p, moved); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	a.undo = append(a.undo, func() error { return os.Rename(moved, p) })
	a.done = append(a.done, func() { _ = os.RemoveAll(moved) })
	return nil
}

func (a *Applied) write(p string, data []byte) error {
	dir := filepath.Dir(p)
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	a.undo = append(a.undo, func() error {
		for _, d := range made {
			_ = os.Remove(d) // only if still empty
		}
		return nil
	})
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	old := ""
	if _, err := os.Lstat(p); err == nil {
		old = aside(p, "replaced")
		if err := os.Link(p, old); err != nil {
			return fmt.Errorf("write %s: keep the file it replaces: %w", p, err)
		}
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		if old != "" {
			_ = os.Remove(old)
		}
		return fmt.Errorf("write %s: %w", p, err)
	}
	if old == "" {
		a.undo = append(a.undo, func() error { return os.Remove(p) })
		return nil
	}
	a.undo = append(a.undo, func() error { return os.Rename(old, p) })
	a.done = append(a.done, func() { _ = os.Remove(old) })
	return nil
}

// Commit keeps the change: what it moved aside is deleted.
func (a *Applied) Commit() {
	for _, f := range a.done {
		f()
	}
	a.done, a.undo = nil, nil
}

// Undo restores what the change replaced or removed, last step first.
func (a *Applied) Undo() error {
	var errs []error
	for i := len(a.undo) - 1; i >= 0; i-- {
		if err := a.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	a.done, a.undo = nil, nil
	if len(errs) > 0 {
		return fmt.Errorf("agents: undo a change: %w", errors.Join(errs...))
	}
	return nil
}

// Digest is the sha256 of a file's contents in hex, or "absent" for a file that does not
// exist: what a write checks it is still replacing.
func Digest(p string) (string, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// Config returns the search path the live catalogue reads.
func (l *Live) Config() Config { return l.cfg }

// Reload parses the files again now, without waiting for the watch to report a change: a
// write buddi made itself is in the catalogue the next Load returns (and Changes signals).
func (l *Live) Reload() (*Catalog, error) {
	l.stale()
	return l.Load()
}

// ReadSource returns the bytes of an agent's own file: the owner's from disk, an example's
// from the examples, with its default: as the file declares it.
func ReadSource(cfg Config, a Agent) (data []byte, declaredDefault bool, err error) {
	if a.Source == SourcePrivate {
		data, err = os.ReadFile(a.Path)
	} else if cfg.Examples != nil {
		label := cfg.ExamplesPath
		if label == "" {
			label = "examples"
		}
		rel, rerr := filepath.Rel(label, a.Path)
		if rerr != nil {
			return nil, false, fmt.Errorf("read %s: %w", a.Path, rerr)
		}
		data, err = fs.ReadFile(cfg.Examples, filepath.ToSlash(rel))
	} else {
		return nil, false, fmt.Errorf("read %s: no examples are loaded", a.Path)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", a.Path, err)
	}
	var ps problems
	parsed, _ := parseAgent(a.Path, data, a.Source, &ps)
	return data, parsed.Default, nil
}
