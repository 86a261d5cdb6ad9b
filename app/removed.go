package app

import (
	"context"
	"errors"
	"log/slog"

	"buddi/agents"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/plugins/developer"
)

// stopProcessesOfRemovedAgents stops the long-lived processes of every agent the catalogue no
// longer has (its file was deleted), with an event each. A catalogue that does not load stops
// nothing: a broken file is not a removal.
func stopProcessesOfRemovedAgents(ctx context.Context, catalog func() (*agents.Catalog, error), store *developer.Store, rec *eventlog.Recorder, log *slog.Logger) {
	procs, err := store.Processes(ctx, "")
	if err != nil || len(procs) == 0 {
		return
	}
	cat, err := catalog()
	if err != nil {
		return
	}
	for _, p := range procs {
		if _, ok := cat.ByID(p.Agent); ok {
			continue
		}
		if err := store.StopProcess(ctx, p.Agent, p.Name); err != nil && !errors.Is(err, developer.ErrNoProcess) {
			log.Warn("stop a process of a removed agent", "agent", p.Agent, "process", p.Name, "err", err)
			continue
		}
		log.Info("stopped a process of a removed agent", "agent", p.Agent, "process", p.Name)
		rec.Record(events.DeveloperProcessStopped, "", events.DeveloperProcessStoppedPayload{Agent: p.Agent, Name: p.Name, Reason: "the agent was removed"})
	}
}
