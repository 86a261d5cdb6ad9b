package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"buddi/agents"
)

// writeJSON prints v on standard output as indented JSON: what every --json prints. The
// field names are the ones docs/CLI.md lists; they are snake_case and stay as they are.
func writeJSON(env *runEnv, v any) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// report prints what a command did: v as JSON with --json, else the line format makes of
// args (a line end is added).
func report(env *runEnv, asJSON bool, v any, format string, args ...any) error {
	if asJSON {
		return writeJSON(env, v)
	}
	_, err := fmt.Fprintf(env.stdout, format+"\n", args...)
	return err
}

// acted is what an action command prints with --json: ok, and what it acted on.
func acted(fields map[string]any) map[string]any {
	out := map[string]any{"ok": true}
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// agentRef names an agent in JSON: its id (what the database keeps) and its handle (what
// the owner reads).
type agentRef struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
}

// resolveAgent finds the agent a person named: by its handle (with or without its @, in any
// case) or by its id.
func resolveAgent(name string) (agents.Agent, error) {
	cat, err := loadCatalog()
	if err != nil {
		return agents.Agent{}, err
	}
	if a, ok := cat.ByHandle(name); ok {
		return a, nil
	}
	if a, ok := cat.ByID(name); ok {
		return a, nil
	}
	return agents.Agent{}, &exitError{code: 1, err: fmt.Errorf("no agent %q: list them with `buddi agents list`", name)}
}

// agentID resolves a handle (@dev) or id to the agent's id.
func agentID(name string) (string, error) {
	a, err := resolveAgent(name)
	return a.ID, err
}

// handles gives the handle of an agent by its id, for what a person reads: the catalog's
// handle, or what it was given when the catalog does not know it (an agent since removed, a
// role:NAME mission) or cannot be loaded.
type handles struct{ cat *agents.Catalog }

// loadHandles loads the catalog for handles; without one every id is shown as it is.
func loadHandles() handles {
	cat, err := loadCatalog()
	if err != nil {
		return handles{}
	}
	return handles{cat: cat}
}

// of is the handle of the agent with id, or id when no agent has it.
func (h handles) of(id string) string {
	if a, ok := h.find(id); ok {
		return a
	}
	return id
}

// find is the handle of the agent with id, if the catalog has one.
func (h handles) find(id string) (string, bool) {
	if h.cat == nil {
		return "", false
	}
	a, ok := h.cat.ByID(id)
	return a.Handle, ok
}

// annotate is v (an object or a list of objects, each naming an agent by id in "agent") as
// JSON values with each object's "agent_handle" beside its "agent" ("" when no agent has
// that id, as for a role:NAME mission). Numbers keep their exact digits.
func (h handles) annotate(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	add := func(o any) {
		if m, ok := o.(map[string]any); ok {
			if id, ok := m["agent"].(string); ok {
				m["agent_handle"], _ = h.find(id)
			}
		}
	}
	if list, ok := out.([]any); ok {
		for _, o := range list {
			add(o)
		}
	} else {
		add(out)
	}
	return out, nil
}

// writeJSON is the package's writeJSON for v annotated with the agents' handles.
func (h handles) writeJSON(env *runEnv, v any) error {
	out, err := h.annotate(v)
	if err != nil {
		return err
	}
	return writeJSON(env, out)
}
