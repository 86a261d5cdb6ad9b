package agents

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// location is one directory of the search path: a directory inside a file system, and the
// name a person would open it by.
type location struct {
	fsys  fs.FS
	dir   string // inside fsys, slash-separated
	label string // how its files are named to the owner
}

// display names a file inside the location for the owner.
func (l location) display(rel ...string) string {
	return filepath.Join(append([]string{l.label}, rel...)...)
}

// half is one half of the search path: its agents directory and its skills directory.
type half struct {
	source Source
	agents location
	skills location
}

// scanned is what one half holds once its files are parsed.
type scanned struct {
	agents   []Agent            // agents that parsed, in file-name order
	partial  []Agent            // every agent file, parsed or not, for the per-directory checks
	failed   map[string]bool    // paths of agent files with a problem
	tried    map[string]bool    // ids of agent files, parsed or not, for the orphan check
	private  map[string][]Skill // private skills by agent id
	privDirs map[string]string  // the private skills directory of each id, for problems
	shared   []Skill            // shared skills, in file-name order
}

// Load reads both halves of the search path, examples first, and builds the catalogue. Any
// problem in any file fails the load; the error is a *[LoadError] listing all of them.
func Load(cfg Config) (*Catalog, error) {
	var ps problems
	examples := half{source: SourceExample}
	if cfg.Examples != nil {
		label := cfg.ExamplesPath
		if label == "" {
			label = "examples"
		}
		examples.agents = location{fsys: cfg.Examples, dir: "agents", label: filepath.Join(label, "agents")}
		examples.skills = location{fsys: cfg.Examples, dir: "skills", label: filepath.Join(label, "skills")}
	}
	owner := half{source: SourcePrivate}
	if cfg.AgentsDir != "" {
		owner.agents = location{fsys: cfg.ownerFS("agents", cfg.AgentsDir), dir: ".", label: cfg.AgentsDir}
	}
	if cfg.SkillsDir != "" {
		owner.skills = location{fsys: cfg.ownerFS("skills", cfg.SkillsDir), dir: ".", label: cfg.SkillsDir}
	}

	ex, own := scan(examples, &ps), scan(owner, &ps)
	checkOrphans(examples, ex, own, &ps)
	checkOrphans(owner, own, ex, &ps)
	c := merge(ex, own, &ps)
	if cfg.KnownTools != nil {
		c.checkTools(cfg.KnownTools, &ps)
	}
	c.checkDelegates(cfg, examples.agents, owner.agents, &ps)
	if len(ps) > 0 {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
		return nil, &LoadError{Problems: ps}
	}
	return c, nil
}

// scan parses every agent and skill file of one half and checks what can be checked inside
// it: one id, one handle and at most one default per directory.
func scan(h half, ps *problems) scanned {
	s := scanned{failed: map[string]bool{}, tried: map[string]bool{}, private: map[string][]Skill{}, privDirs: map[string]string{}}
	if h.agents.fsys != nil {
		for _, e := range readDir(h.agents, ps) {
			name := e.Name()
			switch {
			case e.IsDir():
				skills := location{fsys: h.agents.fsys, dir: path.Join(h.agents.dir, name, "skills"), label: h.agents.display(name, "skills")}
				for _, f := range readDir(skills, ps) {
					if f.IsDir() || !strings.HasSuffix(f.Name(), ".md") {
						continue
					}
					s.privDirs[name] = skills.label
					if sk, ok := parseSkillFile(skills, f.Name(), h.source, name, ps); ok {
						s.private[name] = append(s.private[name], sk)
					}
				}
			case strings.HasSuffix(name, ".md"):
				p := h.agents.display(name)
				data, err := fs.ReadFile(h.agents.fsys, path.Join(h.agents.dir, name))
				if err != nil {
					ps.add(p, "the file cannot be read (%v)", rootCause(err))
					continue
				}
				a, ok := parseAgent(p, data, h.source, ps)
				if a.ID != "" {
					s.tried[a.ID] = true
				}
				s.partial = append(s.partial, a)
				if !ok {
					s.failed[p] = true
				}
			}
		}
	}
	if h.skills.fsys != nil {
		for _, f := range readDir(h.skills, ps) {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".md") {
				continue
			}
			if sk, ok := parseSkillFile(h.skills, f.Name(), h.source, "", ps); ok {
				s.shared = append(s.shared, sk)
			}
		}
	}

	// One id, one handle and one default per directory, checked over every file whose
	// fields could be read, so a clash is reported in the same pass as a file's own
	// problems. The second file is the one named in the problem, with the first in its
	// sentence; only files with no problem at all enter the catalogue.
	ids, handles := map[string]string{}, map[string]string{}
	firstDefault := ""
	for _, a := range s.partial {
		dup := false
		if first, ok := ids[a.ID]; ok && validID(a.ID) {
			ps.add(a.Path, "the id %s is also declared by %s; ids are unique within one directory", a.ID, first)
			dup = true
		}
		if first, ok := handles[a.Handle]; ok && validHandle(a.Handle) {
			ps.add(a.Path, "the handle %s is also declared by %s; handles are unique within one directory", a.Handle, first)
			dup = true
		}
		if a.Default {
			if firstDefault != "" {
				ps.add(a.Path, "default: true is also set by %s; only one agent in a directory may be the default", firstDefault)
			} else {
				firstDefault = a.Path
			}
		}
		if _, seen := ids[a.ID]; !seen && a.ID != "" {
			ids[a.ID] = a.Path
		}
		if _, seen := handles[a.Handle]; !seen && a.Handle != "" {
			handles[a.Handle] = a.Path
		}
		if !dup && !s.failed[a.Path] {
			s.agents = append(s.agents, a)
		}
	}
	return s
}

// checkOrphans reports private skill directories of a half that no agent file of that half
// owns. Private skills sit beside their agent's file: an owner who wants private skills for
// an example agent copies its file into their directory, which replaces the example whole.
func checkOrphans(h half, s, other scanned, ps *problems) {
	for _, id := range sortedKeys(s.privDirs) {
		if s.tried[id] {
			continue
		}
		if h.source == SourcePrivate && other.tried[id] {
			ps.add(s.privDirs[id], "these skills are for %s, whose file is an example; private skills sit beside their agent's file, so copy that file into %s (your copy replaces the example whole)", id, h.agents.label)
			continue
		}
		ps.add(s.privDirs[id], "these skills belong to no agent: no agent file in %s has id %s; rename the directory to an agent's id or add that agent", h.agents.label, id)
	}
}

// parseSkillFile reads and parses one skill file of a location.
func parseSkillFile(l location, name string, source Source, privateFor string, ps *problems) (Skill, bool) {
	p := l.display(name)
	data, err := fs.ReadFile(l.fsys, path.Join(l.dir, name))
	if err != nil {
		ps.add(p, "the file cannot be read (%v)", rootCause(err))
		return Skill{}, false
	}
	return parseSkill(p, strings.TrimSuffix(name, ".md"), data, source, privateFor, ps)
}

// readDir lists a location, skipping hidden entries, in name order. A directory that does
// not exist is empty; one that cannot be read is a problem.
func readDir(l location, ps *problems) []fs.DirEntry {
	entries, err := fs.ReadDir(l.fsys, l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		ps.add(l.label, "the directory cannot be read (%v)", rootCause(err))
		return nil
	}
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return strings.HasPrefix(e.Name(), ".") })
}

// rootCause drops the path an fs error repeats, since the problem already names the file.
func rootCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// merge lays the owner's half over the examples and resolves defaults and skills.
func merge(ex, own scanned, ps *problems) *Catalog {
	c := &Catalog{byID: map[string]int{}, byHandle: map[string]int{}, def: -1}

	// Declaration order: the owner's agents, then the examples they did not replace, each
	// in file-name order. An owner's file replaces an example of the same id whole.
	var declared []Agent
	ownIDs := map[string]bool{}
	for _, a := range own.agents {
		ownIDs[a.ID] = true
		declared = append(declared, a)
	}
	for _, a := range ex.agents {
		if !ownIDs[a.ID] {
			declared = append(declared, a)
		}
	}

	// A handle is one agent's across both halves.
	handles := map[string]Agent{}
	kept := declared[:0]
	for _, a := range declared {
		if other, ok := handles[a.Handle]; ok {
			// other is the owner's (declared first) unless both are examples, which scan
			// already refused; name the owner's file, which is the one the owner can change.
			ps.add(other.Path, "the handle %s is also the handle of %s (id %s); give this agent another handle, or set id: %s to replace that example", a.Handle, a.Path, a.ID, a.ID)
			continue
		}
		handles[a.Handle] = a
		kept = append(kept, a)
	}
	declared = kept

	// The default: the owner's beats the examples'.
	defID := ""
	for _, src := range []Source{SourcePrivate, SourceExample} {
		for _, a := range declared {
			if a.Source == src && a.Default && defID == "" {
				defID = a.ID
			}
		}
	}

	// Shared skills: the owner's replace the examples' of the same name whole.
	shared := map[string]Skill{}
	for _, s := range ex.shared {
		shared[s.Name] = s
	}
	for _, s := range own.shared {
		shared[s.Name] = s
	}
	byRef := map[string]bool{}
	for _, a := range declared {
		byRef[a.ID], byRef[a.Handle] = true, true
	}
	for _, name := range sortedKeys(shared) {
		s := shared[name]
		for _, who := range s.Agents {
			if !byRef[who] {
				ps.add(s.Path, "agents: names %s, but no agent has that id or handle", who)
			}
		}
		c.shared = append(c.shared, s)
	}

	for i, a := range declared {
		a.Default = a.ID == defID
		private := own.private
		if a.Source == SourceExample {
			private = ex.private
		}
		a.Loaded = resolveSkills(a, c.shared, private[a.ID], ps)
		declared[i] = a
	}
	c.declared = declared
	c.agents = slices.Clone(declared)
	slices.SortFunc(c.agents, func(x, y Agent) int { return strings.Compare(x.ID, y.ID) })
	for i, a := range c.agents {
		c.byID[a.ID] = i
		c.byHandle[a.Handle] = i
		if a.Default {
			c.def = i
		}
	}
	return c
}

// resolveSkills gives an agent its skills: the shared skills that load for it or that it
// names, then its private skills; a private skill shadows a shared one of the same name. A
// name in its skills: list that is neither is a problem.
func resolveSkills(a Agent, shared, private []Skill, ps *problems) []Skill {
	own := map[string]bool{}
	for _, s := range private {
		own[s.Name] = true
	}
	named := map[string]bool{}
	for _, n := range a.Skills {
		named[n] = true
	}
	out := []Skill{}
	found := map[string]bool{}
	for _, s := range shared {
		if named[s.Name] {
			found[s.Name] = true
		}
		if own[s.Name] || !(named[s.Name] || s.loadsFor(a)) {
			continue
		}
		out = append(out, s)
	}
	for _, n := range a.Skills {
		if !found[n] && !own[n] {
			ps.add(a.Path, "skills: names %s, but there is no shared skill %s.md and no private skill of that name for %s", n, n, a.ID)
		}
	}
	return append(out, private...)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
