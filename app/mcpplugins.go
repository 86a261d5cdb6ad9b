package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"buddi/core/notify"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/plugins"
	"buddi/plugins/mcp"
	"buddi/scheduler"
)

// CompiledIn are the names of the plugins and tool families compiled into this build: an
// installed plugin cannot take one.
func CompiledIn() []string {
	var names []string
	for _, m := range ServeManifests(nil, "", nil, nil, scheduler.DefaultReminderLimits, seal.Key{}, nil, nil) {
		names = append(names, m.Name)
	}
	return names
}

// InstalledPlugins builds the host of the plugins installed in home (plugins.json): their
// manifests stand in the registry where compiled-in ones do, and in buddi serve the host runs
// their servers under root/plugins. A plugin that does not load (a compiled-in name, a tool
// the registry refuses) is left out and reported in problems; everything else loads. tell,
// when set, tells the owner a plugin's sentence (it was stopped, its tools changed).
func InstalledPlugins(home string, tell scheduler.Tell, log *slog.Logger) (host *mcp.Host, problems []error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rec, err := mcp.LoadRecord(home)
	if err != nil {
		return mcp.NewHost(mcp.Record{}, mcp.HostOptions{Log: log}), []error{err}
	}
	builtIn := CompiledIn()
	var kept mcp.Record
	for _, p := range rec.Plugins {
		if err := mcp.CheckName(p.Name, builtIn); err != nil {
			problems = append(problems, fmt.Errorf("plugin %s is not loaded: %w", p.Name, err))
			continue
		}
		one := mcp.NewHost(mcp.Record{Plugins: []mcp.Plugin{p}}, mcp.HostOptions{})
		if _, err := registry.New(one.Manifests()...); err != nil {
			problems = append(problems, fmt.Errorf("plugin %s is not loaded: %w", p.Name, err))
			continue
		}
		kept.Plugins = append(kept.Plugins, p)
	}
	opts := mcp.HostOptions{Log: log}
	if tell != nil {
		started := time.Now().UTC().Format(time.RFC3339)
		opts.Tell = func(ctx context.Context, plugin, title, sentence string) {
			tell(ctx, notify.Notice{Key: "plugin:" + plugin + ":" + title + ":" + started, Kind: "plugin", Urgency: notify.Urgent,
				Title: title, Body: sentence, Link: "#/"})
		}
	}
	return mcp.NewHost(kept, opts), problems
}

// installedManifests are the installed plugins' manifests for a registry outside buddi
// serve: their tools resolve, and refuse to run.
func installedManifests(home string) []plugins.Manifest {
	if home == "" {
		return nil
	}
	host, _ := InstalledPlugins(home, nil, nil)
	return host.Manifests()
}
