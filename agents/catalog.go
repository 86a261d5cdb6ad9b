package agents

import (
	"slices"
)

// Catalog is a loaded set of agents and skills. It is immutable and safe for concurrent use;
// every method hands out copies.
type Catalog struct {
	agents   []Agent // sorted by id
	declared []Agent // declaration order: the owner's files, then the examples', by file name
	byID     map[string]int
	byHandle map[string]int
	def      int     // index in agents, or -1
	shared   []Skill // sorted by name
}

// All returns every agent, sorted by id.
func (c *Catalog) All() []Agent {
	out := make([]Agent, len(c.agents))
	for i, a := range c.agents {
		out[i] = a.clone()
	}
	return out
}

// ByID returns the agent with id.
func (c *Catalog) ByID(id string) (Agent, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Agent{}, false
	}
	return c.agents[i].clone(), true
}

// ByHandle returns the agent with a handle, given with or without its @ and in any case
// ("@dev", "dev", "@Dev").
func (c *Catalog) ByHandle(handle string) (Agent, bool) {
	i, ok := c.byHandle[NormalizeHandle(handle)]
	if !ok {
		return Agent{}, false
	}
	return c.agents[i].clone(), true
}

// Default returns the default agent: the owner's agent with default: true, else the
// example's. With none it returns a *[NoDefaultError].
func (c *Catalog) Default() (Agent, error) {
	if c.def < 0 {
		return Agent{}, &NoDefaultError{}
	}
	return c.agents[c.def].clone(), nil
}

// ForRole returns the first agent in declaration order that claims role: the owner's files
// first, then the examples', each in file-name order. When no agent claims it, the error is
// a *[RoleUnclaimedError] naming the frontmatter line to add.
func (c *Catalog) ForRole(role string) (Agent, error) {
	for _, a := range c.declared {
		if a.HasRole(role) {
			return a.clone(), nil
		}
	}
	return Agent{}, &RoleUnclaimedError{Role: role}
}

// Skills returns every shared skill (skills/*.md of both halves, the owner's replacing the
// examples' of the same name), sorted by name. An agent's private skills are in its
// Agent.Loaded.
func (c *Catalog) Skills() []Skill {
	out := slices.Clone(c.shared)
	for i := range out {
		out[i].Agents = slices.Clone(out[i].Agents)
	}
	return out
}

// CheckTools checks every agent's grant against the registered tools: known reports whether
// a name is registered. It returns a *[LoadError] naming each agent file with an unknown
// tool, or nil. A nil known registers nothing, so every grant fails closed. [Load] runs the
// same check when [Config.KnownTools] is set.
func (c *Catalog) CheckTools(known func(name string) bool) error {
	if known == nil {
		known = func(string) bool { return false }
	}
	var ps problems
	c.checkTools(known, &ps)
	if len(ps) > 0 {
		return &LoadError{Problems: ps}
	}
	return nil
}

// checkTools adds a problem for each granted tool known does not report.
func (c *Catalog) checkTools(known func(string) bool, ps *problems) {
	for _, a := range c.agents {
		for _, t := range a.Tools {
			if !known(t) {
				ps.add(a.Path, "tools: grants %s, which no installed plugin provides; install the plugin that provides it or take it out of the grant", t)
			}
		}
	}
}
