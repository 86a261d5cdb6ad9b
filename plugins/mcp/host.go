package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"buddi/actors"
	"buddi/plugins"
)

// Budget is each plugin's restart budget: a server that exits is started again after 1 s,
// then 2 s, then 4 s; a fourth exit within a minute stops it and the owner is told.
var Budget = actors.Budget{MaxRestarts: 3, Within: time.Minute, Backoff: time.Second}

// HostOptions tune a Host; the zero value works.
type HostOptions struct {
	// Log receives what the host logs, and each server's standard error. Nil discards.
	Log *slog.Logger
	// Tell tells the owner one sentence about a plugin (it was stopped, its tools changed).
	// Nil: the log only.
	Tell func(ctx context.Context, plugin, title, sentence string)
	// Budget is each plugin's restart budget. Zero: Budget.
	Budget actors.Budget
	// StartTimeout bounds one start and initialisation. Zero: 30 s.
	StartTimeout time.Duration
	// WaitReady is how long a call waits for a plugin that is starting or starting again.
	// Zero: 30 s.
	WaitReady time.Duration
}

// Host runs the installed plugins' servers and answers their tools' calls. Built with
// NewHost from the record, its Manifests stand in the registry beside the compiled-in ones;
// Start puts each server under an actor of root/plugins. A Host that was never started (the
// command line's registry) has the same tools, which refuse to run outside buddi serve.
type Host struct {
	opts HostOptions
	log  *slog.Logger

	mu      sync.Mutex
	serving bool
	states  map[string]*state // by plugin name
	order   []string
}

// state is one plugin's live state, kept by its actor.
type state struct {
	plugin   Plugin
	sess     *Session
	ready    chan struct{}     // closed while sess is set
	down     string            // the sentence once it was given up
	disabled map[string]string // MCP tool name → why it refuses
	changes  []Change          // the difference found at the last start
	starts   int
	pid      int
}

// NewHost returns a host for the plugins of rec.
func NewHost(rec Record, opts HostOptions) *Host {
	if opts.Budget == (actors.Budget{}) {
		opts.Budget = Budget
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.WaitReady <= 0 {
		opts.WaitReady = 30 * time.Second
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Host{opts: opts, log: log.With("service", "plugins"), states: map[string]*state{}}
	for _, p := range rec.Plugins {
		h.states[p.Name] = &state{plugin: p, ready: make(chan struct{}), disabled: map[string]string{}}
		h.order = append(h.order, p.Name)
	}
	return h
}

// Manifests are the installed plugins as plugins.Manifest values, one per plugin, whose
// tools call the plugin's server.
func (h *Host) Manifests() []plugins.Manifest {
	var out []plugins.Manifest
	for _, name := range h.order {
		out = append(out, h.manifest(h.states[name].plugin))
	}
	return out
}

func (h *Host) manifest(p Plugin) plugins.Manifest {
	m := plugins.Manifest{Name: p.Name, Version: p.Version, Description: p.Description, Network: slices.Clone(p.Network)}
	if m.Description == "" {
		m.Description = "An MCP server installed as a plugin (" + p.Transport() + ")."
	}
	for _, t := range p.Tools {
		m.Tools = append(m.Tools, &tool{h: h, plugin: p, t: t})
	}
	for _, s := range p.Missions {
		m.Missions = append(m.Missions, plugins.SuggestedMission{ID: s.ID, Cron: s.Cron, Prompt: s.Prompt, Role: s.Role})
	}
	for _, a := range p.Agents {
		m.Agents = append(m.Agents, plugins.SuggestedAgent{ID: a.ID, Handle: a.Handle, Name: a.Name, Tools: slices.Clone(a.Tools), Persona: a.Persona})
	}
	return m
}

// Status is one plugin as its actor last reported it.
type Status struct {
	// Name is the plugin's name.
	Name string `json:"name"`
	// State is "starting", "running" or "stopped".
	State string `json:"state"`
	// Pid is the stdio server's process id while it runs.
	Pid int `json:"pid,omitempty"`
	// Restarts counts the starts after the first.
	Restarts int `json:"restarts"`
	// Sentence says why it is stopped.
	Sentence string `json:"sentence,omitempty"`
	// Disabled are the tools that refuse, by MCP name, with why.
	Disabled map[string]string `json:"disabled,omitempty"`
}

// Statuses reports every plugin, by name.
func (h *Host) Statuses() []Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Status
	for _, name := range h.order {
		st := h.states[name]
		s := Status{Name: name, State: "starting", Pid: st.pid, Restarts: max(st.starts-1, 0), Sentence: st.down}
		switch {
		case st.down != "":
			s.State = "stopped"
		case st.sess != nil:
			s.State = "running"
		}
		if len(st.disabled) > 0 {
			s.Disabled = map[string]string{}
			for k, v := range st.disabled {
				s.Disabled[k] = v
			}
		}
		out = append(out, s)
	}
	return out
}

// errNotServing refuses a plugin's call outside buddi serve.
var errNotServing = errors.New("runs only inside buddi serve")

// refusal is why a call of the plugin's tool mcpName refuses now, or "".
func (h *Host) refusal(plugin, mcpName string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.states[plugin]
	switch {
	case st == nil:
		return "plugin " + plugin + " is not installed"
	case !h.serving:
		return "plugin " + plugin + " " + errNotServing.Error()
	case st.down != "":
		return st.down
	case st.disabled[mcpName] != "":
		return st.disabled[mcpName]
	}
	return ""
}

// session waits for the plugin's session while it is starting, up to WaitReady.
func (h *Host) session(ctx context.Context, plugin, mcpName string) (*Session, error) {
	deadline := time.NewTimer(h.opts.WaitReady)
	defer deadline.Stop()
	for {
		if why := h.refusal(plugin, mcpName); why != "" {
			return nil, errors.New(why)
		}
		h.mu.Lock()
		st := h.states[plugin]
		sess, ready := st.sess, st.ready
		h.mu.Unlock()
		if sess != nil {
			return sess, nil
		}
		select {
		case <-ready:
		case <-deadline.C:
			return nil, fmt.Errorf("plugin %s did not come up within %s", plugin, h.opts.WaitReady)
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for plugin %s: %w", plugin, context.Cause(ctx))
		}
	}
}

// up records a started session and the tools it disables.
func (h *Host) up(name string, s *Session, changes []Change) {
	h.mu.Lock()
	st := h.states[name]
	st.sess, st.pid, st.changes = s, s.Pid(), changes
	st.starts++
	st.disabled = map[string]string{}
	for _, c := range changes {
		if c.Kind == "added" {
			continue // not accepted, so not registered: nothing to disable
		}
		st.disabled[c.Tool] = fmt.Sprintf("%s of plugin %s is off until the owner accepts the change (%s) with `buddi plugins add %s --upgrade --yes`.",
			c.Tool, name, c.Sentence(), name)
	}
	close(st.ready)
	h.mu.Unlock()
}

// downFor records that the session ended; calls wait for the next one.
func (h *Host) downFor(name string) {
	h.mu.Lock()
	st := h.states[name]
	if st.sess != nil {
		st.sess, st.pid = nil, 0
		st.ready = make(chan struct{})
	}
	h.mu.Unlock()
}

// gaveUp records the sentence a plugin that spent its budget refuses with, and tells it.
func (h *Host) gaveUp(name, reason string, restarts int) {
	sentence := fmt.Sprintf("Plugin %s kept stopping (last: %s) and was started again %d %s within %s, so buddi stopped it; its tools refuse until buddi starts again.",
		name, oneLine(reason), restarts, timesWord(restarts), h.opts.Budget.Within)
	h.mu.Lock()
	st := h.states[name]
	if st == nil {
		h.mu.Unlock()
		return
	}
	st.down = sentence
	close(st.ready) // wake the waiting calls: they refuse now
	st.ready = make(chan struct{})
	h.mu.Unlock()
	h.log.Error(sentence, "plugin", name)
	h.tell(name, "Plugin "+name+" stopped", sentence)
}

func (h *Host) tell(plugin, title, sentence string) {
	if h.opts.Tell == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.opts.Tell(ctx, plugin, title, sentence)
}

func timesWord(n int) string {
	if n == 1 {
		return "time"
	}
	return "times"
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// logWriter turns a server's standard error into log lines.
type logWriter struct {
	log    *slog.Logger
	plugin string
}

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			w.log.Info("plugin stderr: "+line, "plugin", w.plugin)
		}
	}
	return len(p), nil
}

var _ io.Writer = logWriter{}
