package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/config"
	"buddi/core/seal"
	"buddi/core/vault"
	"buddi/health"
	"buddi/plugins/developer"
	"buddi/supervisor"
	"buddi/supervisor/proc"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/preview"
	"buddi/tailnet"
)

// TailnetAuthKeyName is the vault entry that holds the tailnet auth key (`buddi tailnet
// authkey`); TS_AUTHKEY in the environment wins over it.
const TailnetAuthKeyName = "TS_AUTHKEY"

// tailnetWanted reports whether this run puts buddi on the tailnet: the --tailnet flag, or the
// saved setting.
func tailnetWanted(ctx context.Context, cfg config.Config, pool *pgxpool.Pool) (bool, error) {
	if cfg.Tailnet {
		return true, nil
	}
	return tailnet.Enabled(ctx, pool)
}

// startTailnet starts the node in <home>/tsnet with the auth key from the environment or the
// vault. The node comes up in the background; a login it needs is logged and shown in health.
func startTailnet(cfg config.Config, authKey string, secrets vault.Vault, log *slog.Logger) (*tailnet.Node, error) {
	from := "TS_AUTHKEY"
	if authKey == "" && secrets != nil {
		if k, err := secrets.Get(TailnetAuthKeyName); err == nil {
			authKey, from = k, "the vault"
		}
	}
	node, err := tailnet.Start(tailnet.Config{Dir: filepath.Join(cfg.Home, "tsnet"), Hostname: cfg.TailnetHostname,
		ControlURL: cfg.TailnetControlURL, AuthKey: authKey, AuthKeyFrom: from, NoHTTPS: cfg.TailnetNoHTTPS, Log: log})
	if err != nil {
		return nil, fmt.Errorf("%w (turn the tailnet off with `buddi tailnet off`, or start without --tailnet)", err)
	}
	return node, nil
}

// tailnetServing is what the tailnet actor serves, read by health.
type tailnetServing struct {
	node        *tailnet.Node
	gate        *tailnet.Gate
	pool        *pgxpool.Pool
	seal        seal.Key                 // the owner's login is checked under it
	dashboard   func() *dashboard.Server // the dashboard as served on the tailnet
	previews    *preview.Server
	previewPort int
	devStore    *developer.Store
	procs       *supervisor.ProcessHost // what runs: its changes move the ports
	log         *slog.Logger

	mu     sync.Mutex
	routes *tailnet.Routes // the open per-process ports, nil until the node runs
}

// health reads the node's part of the report.
func (t *tailnetServing) health(ctx context.Context) *health.Tailnet {
	st := t.node.Status()
	h := &health.Tailnet{State: st.State, Hostname: st.Hostname, DNSName: st.DNSName, IPs: st.IPs, HTTPS: st.HTTPS,
		LoginURL: st.LoginURL, Error: st.Error, Problem: st.Problem()}
	if st.DNSName != "" {
		h.URL = "http://" + st.DNSName + "/"
		if st.HTTPS {
			h.URL = "https://" + st.DNSName + "/"
		}
	}
	if owner, err := tailnet.Owner(ctx, t.pool, t.seal); err == nil {
		h.Owner = owner
	}
	t.mu.Lock()
	routes := t.routes
	t.mu.Unlock()
	if routes != nil {
		for _, r := range routes.Open() {
			h.Ports = append(h.Ports, health.TailnetPort{Process: r.Name, Port: r.Port})
		}
	}
	return h
}

// wantedRoutes are the developer processes that get a tailnet port: all running ones with a
// port, when the owner turned the switch on; none otherwise. Ports the node itself serves and
// privileged ones are left out. What runs is the process host's record, in memory.
func (t *tailnetServing) wantedRoutes(ctx context.Context) ([]tailnet.Route, error) {
	on, err := t.devStore.TailnetPreviews(ctx)
	if err != nil || !on {
		return nil, err
	}
	var out []tailnet.Route
	for _, p := range t.procs.List("") {
		if p.State != proc.StateRunning || p.Port < 1024 || p.Port == t.previewPort {
			continue
		}
		out = append(out, tailnet.Route{Plugin: developer.Name, Name: p.Name, Port: p.Port})
	}
	return out, nil
}

// followSwitch signals flips each time the Settings → Developer switch is set (the developer
// store announces it on developer.TailnetChannel), and once after each (re)connection, since a
// flip may have been missed meanwhile. It returns when ctx ends.
func (t *tailnetServing) followSwitch(ctx context.Context, flips chan<- struct{}) {
	signal := func() {
		select {
		case flips <- struct{}{}:
		default:
		}
	}
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := func() error {
			conn, err := t.pool.Acquire(ctx)
			if err != nil {
				return err
			}
			// A connection that listens goes when done, never back to the pool.
			c := conn.Hijack()
			defer c.Close(context.WithoutCancel(ctx))
			if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{developer.TailnetChannel}.Sanitize()); err != nil {
				return err
			}
			pause = 100 * time.Millisecond
			signal()
			for {
				if _, err := c.WaitForNotification(ctx); err != nil {
					return err
				}
				signal()
			}
		}()
		if ctx.Err() != nil {
			return
		}
		t.log.Warn("the tailnet switch is not followed until the database answers again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// serve puts the dashboard (80, and 443 when the tailnet offers a certificate), the preview
// origin (the preview listener's port) and the processes' ports on the node, once it runs, and
// keeps the processes' ports in line until ctx ends. It returns when ctx ends, or with an error
// when a listener fails.
func (t *tailnetServing) serve(ctx context.Context) error {
	if err := t.node.WaitRunning(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	dash := t.dashboard()
	ended := make(chan error, 3)
	var servers []interface{ Shutdown(context.Context) error }
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, s := range servers {
			_ = s.Shutdown(sctx)
		}
	}()
	l80, err := t.node.Listen(80)
	if err != nil {
		return err
	}
	servers = append(servers, dash)
	go func() { ended <- dash.Serve(l80) }()
	if t.node.Status().HTTPS {
		if l443, err := t.node.ListenTLS(443); err != nil {
			t.log.Warn("the dashboard is not served with HTTPS on the tailnet", "err", err)
		} else {
			go func() { ended <- dash.Serve(l443) }()
		}
	}
	lp, err := t.node.Listen(t.previewPort)
	if err != nil {
		return err
	}
	// The preview origin's websockets (hijacked, out of Shutdown's reach) end with ctx.
	prev := &http.Server{Handler: tailnet.EndWith(ctx, t.gate.OwnerOnly("preview", t.previews.Handler())), ReadHeaderTimeout: 10 * time.Second}
	servers = append(servers, prev)
	go func() {
		err := prev.Serve(lp)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		ended <- err
	}()
	routes := tailnet.NewRoutes(t.listenRoute, func(r tailnet.Route) http.Handler {
		return t.gate.OwnerOnly("preview "+r.Name, tailnet.OwnPagesOnly(t.previews.Root(r.Plugin, r.Name, r.Port)))
	}, t.log)
	t.mu.Lock()
	t.routes = routes
	t.mu.Unlock()
	defer func() {
		routes.Close()
		t.mu.Lock()
		t.routes = nil
		t.mu.Unlock()
	}()
	t.log.Info("the dashboard is on the tailnet", "url", "http://"+t.node.Status().DNSName+"/")
	// The processes' ports follow what runs (the process host's changes) and the switch (its
	// notifications): nothing is polled.
	flips := make(chan struct{}, 1)
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		t.followSwitch(ctx, flips)
	}()
	defer func() { <-listening }()
	reconcile := func() {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		want, err := t.wantedRoutes(rctx)
		if err != nil {
			if ctx.Err() == nil {
				t.log.Warn("read the tailnet switch; the open ports stay as they are", "err", err)
			}
			return
		}
		routes.Reconcile(want)
	}
	reconcile()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-ended:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("a tailnet listener stopped: %v", err)
		case <-t.procs.Changes():
			reconcile()
		case <-flips:
			reconcile()
		}
	}
}

// listenRoute opens a process's port on the node: with the tailnet's certificate when it
// offers one, in plain HTTP otherwise.
func (t *tailnetServing) listenRoute(port int) (net.Listener, error) {
	if t.node.Status().HTTPS {
		return t.node.ListenTLS(port)
	}
	return t.node.Listen(port)
}
