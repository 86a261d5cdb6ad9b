package actors

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// Go returns the producer of an actor that runs work, a blocking function, on
// a goroutine of its own for as long as the actor lives: a poll loop, a server
// on a listener, a watched OS process, a run of the agent loop. It is the one
// way buddi puts blocking work under supervision.
//
//   - Started starts work with a context that Drain, Stopping and Restarting
//     cancel; the actor then waits for work to return.
//   - A panic in work is recovered on its goroutine and arrives as a message:
//     the actor fails with the panic and its stack, and its supervisor restarts
//     it (running work again) within its budget.
//   - A return of work while the actor lives is a failure too ("name ended:
//     why"), unless an option says otherwise (Quiet, Finished).
func Go(name string, work func(ctx context.Context) error, opts ...GoOption) func() Actor {
	var cfg goConfig
	for _, o := range opts {
		o(&cfg)
	}
	return func() Actor { return &goActor{name: name, work: work, cfg: cfg} }
}

// GoOption tunes an actor made by Go.
type GoOption func(*goConfig)

type goConfig struct {
	quiet    func(error) bool
	finished func(c *Context, err error)
}

// Quiet makes an end of the work for which quiet reports true leave the actor
// idle, running nothing, instead of failing it (a refused credential: the
// surface stays down and says so).
func Quiet(quiet func(error) bool) GoOption {
	return func(c *goConfig) { c.quiet = quiet }
}

// Finished makes the work a task: its return, an error or nil, is handed to
// finished on the actor's goroutine, and the actor stays idle until it is
// stopped. Only a panic fails it, and a restart runs the work again.
func Finished(finished func(c *Context, err error)) GoOption {
	return func(c *goConfig) { c.finished = finished }
}

// goActor runs one Go work.
type goActor struct {
	name string
	work func(ctx context.Context) error
	cfg  goConfig

	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
}

// goEnded tells the actor its work returned (or panicked) by itself.
type goEnded struct {
	from     *goActor // the incarnation that ran it
	err      error
	panicked string // the panic and its stack; empty when it returned
}

func (a *goActor) Receive(c *Context) {
	switch m := c.Message().(type) {
	case Started:
		a.start(c)
	case goEnded:
		if m.from != a {
			return // a message of an earlier incarnation
		}
		if m.panicked != "" {
			panic(fmt.Sprintf("%s panicked: %s", a.name, m.panicked))
		}
		if a.cfg.finished != nil {
			a.cfg.finished(c, m.err)
			return
		}
		if a.cfg.quiet != nil && a.cfg.quiet(m.err) {
			c.Log().Info(a.name+" ended; the actor stays idle", "err", m.err)
			return
		}
		panic(a.name + " ended: " + errText(m.err))
	case Drain, Stopping, Restarting:
		a.halt()
	}
}

func (a *goActor) start(c *Context) {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan struct{})
	sys, self, done := c.sys, c.Self(), a.done
	go func() {
		defer close(done)
		ended := goEnded{from: a}
		defer func() {
			if r := recover(); r != nil {
				ended.panicked = fmt.Sprintf("%v\n%s", r, trimStack(debug.Stack()))
			}
			if ended.panicked != "" || ctx.Err() == nil {
				sys.Send(self, ended)
			}
		}()
		ended.err = a.work(ctx)
	}()
}

// halt cancels the work and waits for it to return.
func (a *goActor) halt() {
	if a.cancel == nil {
		return
	}
	a.cancel()
	<-a.done
	a.cancel = nil
}

func errText(err error) string {
	if err == nil {
		return "without an error"
	}
	return err.Error()
}

// trimStack drops the frames of the panic machinery above the one that
// panicked, so the reason starts where the fault is.
func trimStack(stack []byte) string {
	s := string(stack)
	if i := strings.Index(s, "panic("); i >= 0 {
		if j := strings.Index(s[i:], "\n"); j >= 0 {
			if k := strings.Index(s[i+j+1:], "\n"); k >= 0 {
				s = s[i+j+1+k+1:]
			}
		}
	}
	const max = 4 << 10
	if len(s) > max {
		s = s[:max] + "\n…"
	}
	return s
}
