package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"buddi/actors"
)

// Start spawns root/plugins under parent, a supervising actor whose strategy is one-for-one
// within the plugins' budget, a plugin that spends it stopped and nothing escalated, and one
// actor per plugin under it, which owns the plugin's server: it starts it, initialises it,
// compares its tools with the accepted ones, and returns when it exits, so its supervisor
// starts it again. Stopping the actor closes the session and stops the server.
func (h *Host) Start(sys *actors.System, parent *actors.Ref) (*actors.Ref, error) {
	h.mu.Lock()
	h.serving = true
	h.mu.Unlock()
	strategy := actors.Strategy{Kind: actors.OneForOne, Budget: h.opts.Budget, Contain: true}
	ref, err := sys.SpawnSupervisor(parent, "plugins", strategy, func() actors.Actor { return &pluginsActor{h: h} })
	if err != nil {
		return nil, fmt.Errorf("start the plugins' supervisor: %w", err)
	}
	for _, name := range h.order {
		if _, err := sys.Spawn(ref, name, actors.Go("plugin "+name, h.work(name))); err != nil {
			return ref, fmt.Errorf("start plugin %s: %w", name, err)
		}
	}
	return ref, nil
}

// pluginsActor is root/plugins' behaviour: it hears of a plugin given up.
type pluginsActor struct{ h *Host }

// Receive implements actors.Actor.
func (a *pluginsActor) Receive(c *actors.Context) {
	if m, ok := c.Message().(actors.ChildFailed); ok {
		a.h.gaveUp(m.Path[strings.LastIndexByte(m.Path, '/')+1:], m.Reason, m.Restarts)
	}
}

// work is one plugin actor's work: start the server, then wait for its end (a failure, for
// the supervisor to restart) or for the actor's stop.
func (h *Host) work(name string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		h.mu.Lock()
		p := h.states[name].plugin
		h.mu.Unlock()
		startCtx, cancel := context.WithTimeout(ctx, h.opts.StartTimeout)
		s, err := Connect(startCtx, p, ConnectOptions{Stderr: logWriter{log: h.log, plugin: name}})
		if err != nil {
			cancel()
			return err
		}
		listed, err := s.Tools(startCtx)
		cancel()
		if err != nil {
			_ = s.Close()
			return err
		}
		changes := Diff(p.Tools, listed)
		h.up(name, s, changes)
		if len(changes) > 0 {
			words := make([]string, len(changes))
			for i, c := range changes {
				words[i] = c.Sentence()
			}
			sentence := fmt.Sprintf("Plugin %s's tools changed since you accepted them (%s); the changed tools are off until you run `buddi plugins add %s --upgrade --yes` to see and accept the difference.",
				name, strings.Join(words, "; "), name)
			h.log.Warn(sentence, "plugin", name)
			if h.firstStart(name) {
				go h.tell(name, "Plugin "+name+" changed", sentence)
			}
		}
		h.log.Info("plugin started", "plugin", name, "pid", s.Pid(), "tools", len(listed))
		ended := make(chan error, 1)
		go func() { ended <- s.Wait() }()
		select {
		case err := <-ended:
			h.downFor(name)
			_ = s.Close()
			h.log.Warn("plugin stopped", "plugin", name, "err", err)
			return err
		case <-ctx.Done():
			h.downFor(name)
			if err := s.Close(); err != nil && !errors.Is(err, context.Canceled) {
				h.log.Debug("plugin closed", "plugin", name, "err", err)
			}
			<-ended
			return ctx.Err()
		}
	}
}

// firstStart reports whether the plugin's session is its first since buddi started.
func (h *Host) firstStart(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.states[name].starts == 1
}
