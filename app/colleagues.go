package app

import (
	"fmt"
	"log/slog"
	"strings"

	"buddi/agents"
	"buddi/runtime/delegate"
)

// colleagues is the paragraph of an agent's system prompt that names whom it may hand a
// question to with agent.delegate, read from its delegates.json at each step (as the tool
// reads it at each call), so the prompt and the tool never disagree. An agent without the
// tool is told nothing.
func colleagues(cfg agents.Config, catalog func() (*agents.Catalog, error), log *slog.Logger) func(a agents.Agent) string {
	return func(a agents.Agent) string {
		if !a.HasTool(delegate.Tool) {
			return ""
		}
		cat, err := catalog()
		if err != nil {
			return ""
		}
		d, err := agents.ReadDelegates(cfg, cat, a, log)
		if err != nil {
			return "Your list of colleagues cannot be read (" + err.Error() + "), so " + delegate.Tool + " refuses every call until the owner fixes it."
		}
		if len(d.Allowed) == 0 {
			return fmt.Sprintf("You may hand a question to no colleague: %s refuses every call. The owner adds colleagues in %s.", delegate.Tool, d.Path)
		}
		names := make([]string, len(d.Allowed))
		for i, c := range d.Allowed {
			names[i] = fmt.Sprintf("%s (%s, id %s)", c.Handle, c.Name, c.ID)
		}
		return fmt.Sprintf("You may hand a question to these colleagues with %s, each in a conversation of its own: %s. Anyone else is refused.",
			delegate.Tool, strings.Join(names, ", "))
	}
}
