package dashboard

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"buddi/actors"
)

// Servable is an HTTP server an actor owns: the dashboard's, or the previews'.
type Servable interface {
	// Serve answers on l until Shutdown, and returns nil after one.
	Serve(l net.Listener) error
	// Shutdown stops taking connections and closes what is open by ctx's end.
	Shutdown(ctx context.Context) error
}

// shutdownWait bounds a server's shutdown when its actor stops.
const shutdownWait = 5 * time.Second

// Actor returns the producer of the actor that owns a listener and its server (the
// dashboard's, the previews'). first is the listener bound at start (so a port in use fails
// buddi serve at once); after a restart the actor binds the address again. A server that
// stops on its own fails the actor.
func Actor(first net.Listener, newSrv func() Servable) func() actors.Actor {
	addr := first.Addr().String()
	var mu sync.Mutex
	take := func() (net.Listener, error) {
		mu.Lock()
		defer mu.Unlock()
		if l := first; l != nil {
			first = nil // only the first incarnation gets the pre-bound listener
			return l, nil
		}
		return Listen(addr)
	}
	return actors.Go("server on "+addr, func(ctx context.Context) error {
		l, err := take()
		if err != nil {
			return err
		}
		srv := newSrv()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		select {
		case err := <-served:
			if err == nil {
				return fmt.Errorf("server on %s stopped without an error", addr)
			}
			return fmt.Errorf("server on %s stopped: %w", addr, err)
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				return fmt.Errorf("server on %s: shutdown: %w", addr, err)
			}
			return nil
		}
	})
}
