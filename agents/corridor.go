package agents

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"strings"
)

// checkDelegates adds a problem for each delegates.json that names an agent holding a
// platform write tool: delegation would be a corridor from the agent that reads untrusted
// mail to the one that writes grants (seed 004, "Agent-created agents"). The file read for an
// agent is the one [ReadDelegates] reads: the owner's <agents>/<id>/delegates.json, else, for
// an example agent, the one shipped beside it. A file that is not a JSON list is left to
// ReadDelegates, which refuses it at the call.
func (c *Catalog) checkDelegates(cfg Config, examples, owner location, ps *problems) {
	writers := map[string]Agent{}
	for _, a := range c.agents {
		if a.HoldsPlatformWrites() {
			writers[a.ID] = a
		}
	}
	if len(writers) == 0 {
		return
	}
	for _, a := range c.agents {
		data, shown, ok := delegatesOf(a, examples, owner)
		if !ok {
			continue
		}
		var entries []string
		if json.Unmarshal(data, &entries) != nil {
			continue
		}
		for _, e := range entries {
			w, ok := lookup(c, strings.TrimSpace(e))
			if !ok || w.ID == a.ID {
				continue
			}
			if _, holds := writers[w.ID]; holds {
				ps.add(shown, "names %s, which holds the platform write tools; no agent may hand work to an agent that makes agents (the owner talks to it directly), so take %s off this list", w.Handle, e)
			}
		}
	}
}

// delegatesOf reads an agent's delegates.json: the owner's first, then an example's own.
func delegatesOf(a Agent, examples, owner location) (data []byte, shown string, ok bool) {
	places := []location{owner}
	if a.Source == SourceExample {
		places = append(places, examples)
	}
	for _, l := range places {
		if l.fsys == nil {
			continue
		}
		rel := path.Join(l.dir, a.ID, DelegatesFile)
		data, err := fs.ReadFile(l.fsys, rel)
		if err == nil {
			return data, l.display(a.ID, DelegatesFile), true
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", false // unreadable: ReadDelegates refuses it at the call
		}
	}
	return nil, "", false
}
