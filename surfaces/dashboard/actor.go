package dashboard

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"buddi/actors"
)

// serveEnded tells the actor its server stopped on its own.
type serveEnded struct{ err error }

// actor owns the listener and the HTTP server. It takes the listener bound at start (so a
// port in use fails buddi serve at once); after a restart it binds the address again.
type actor struct {
	sys    *actors.System
	addr   string
	first  net.Listener
	newSrv func() Servable
	srv    Servable
}

// Servable is an HTTP server an actor owns: the dashboard's, or the previews'.
type Servable interface {
	// Serve answers on l until Shutdown, and returns nil after one.
	Serve(l net.Listener) error
	// Shutdown stops taking connections and closes what is open by ctx's end.
	Shutdown(ctx context.Context) error
}

// Actor returns the producer of the actor that owns a listener and its server (the
// dashboard's, the previews'). first is the listener bound at start.
func Actor(sys *actors.System, first net.Listener, newSrv func() Servable) func() actors.Actor {
	addr := first.Addr().String()
	var mu sync.Mutex
	return func() actors.Actor {
		mu.Lock()
		defer mu.Unlock()
		a := &actor{sys: sys, addr: addr, newSrv: newSrv, first: first}
		first = nil // only the first incarnation gets the pre-bound listener
		return a
	}
}

func (a *actor) Receive(c *actors.Context) {
	switch m := c.Message().(type) {
	case actors.Started:
		l := a.first
		if l == nil {
			var err error
			if l, err = Listen(a.addr); err != nil {
				panic(err)
			}
		}
		a.srv = a.newSrv()
		srv, self := a.srv, c.Self()
		go func() {
			if err := srv.Serve(l); err != nil {
				a.sys.Send(self, serveEnded{err: err})
			}
		}()
	case serveEnded:
		panic(fmt.Sprintf("server on %s stopped: %v", a.addr, m.err))
	case actors.Drain, actors.Stopping, actors.Restarting:
		if a.srv == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.srv.Shutdown(ctx); err != nil {
			c.Log().Warn("server shutdown", "addr", a.addr, "err", err)
		}
		a.srv = nil
	}
}
