// Package tailnettest runs a tailnet offline for tests: tailscale's own coordination server
// (testcontrol) and a DERP relay with STUN, in-process on loopback, and tsnet nodes that join
// it, playing the owner's phone or a stranger's laptop. Nodes on one machine reach each other
// through the DERP relay.
package tailnettest

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tailscale.com/ipn/store/mem"
	"tailscale.com/net/netns"
	"tailscale.com/tailcfg"
	"tailscale.com/tsnet"
	"tailscale.com/tstest/integration"
	"tailscale.com/tstest/integration/testcontrol"
	"tailscale.com/types/logger"
)

// Domain is the test tailnet's MagicDNS domain.
const Domain = "tail-test.ts.net"

// Control is a running coordination server.
type Control struct {
	// URL is its address, for TS_CONTROL_URL.
	URL string
	// Server is tailscale's test control server, to require an auth key or a login.
	Server *testcontrol.Server
}

// StartControl starts DERP, STUN and a coordination server on loopback, stopped at the test's
// end. Each node that registers gets a user of its own (user-1@…, user-2@…, in order). The
// options set the server up before it serves (RequireAuth, RequireAuthKey): its own goroutines
// read those fields, so they are not changed after.
func StartControl(t testing.TB, options ...func(*testcontrol.Server)) *Control {
	t.Helper()
	// The nodes in this process dial loopback without the socket marks a real node uses.
	netns.SetEnabled(false)
	t.Cleanup(func() { netns.SetEnabled(true) })
	derpMap := integration.RunDERPAndSTUN(t, logger.Discard, "127.0.0.1")
	ctl := &testcontrol.Server{
		DERPMap:        derpMap,
		DNSConfig:      &tailcfg.DNSConfig{Proxied: true},
		MagicDNSDomain: Domain,
		Logf:           logger.Discard,
	}
	for _, o := range options {
		o(ctl)
	}
	ctl.HTTPTestServer = httptest.NewUnstartedServer(ctl)
	ctl.HTTPTestServer.Start()
	t.Cleanup(ctl.HTTPTestServer.Close)
	return &Control{URL: ctl.HTTPTestServer.URL, Server: ctl}
}

// Node joins a tsnet node named hostname to the tailnet and waits until it is up and has its
// home DERP connection (until then a peer's first packets may be dropped). It is closed at the
// test's end.
func Node(t testing.TB, ctx context.Context, controlURL, hostname string) *tsnet.Server {
	t.Helper()
	dir := filepath.Join(t.TempDir(), hostname)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := &tsnet.Server{Dir: dir, ControlURL: controlURL, Hostname: hostname, Store: new(mem.Store), Ephemeral: true,
		Logf: logger.Discard, UserLogf: logger.Discard}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Up(ctx); err != nil {
		t.Fatalf("bring %s up: %v", hostname, err)
	}
	WaitDERP(t, ctx, s)
	return s
}

// WaitDERP waits until s has picked a home DERP region and heard from it.
func WaitDERP(t testing.TB, ctx context.Context, s *tsnet.Server) {
	t.Helper()
	h := s.Sys().HealthTracker.Get()
	ms := s.Sys().MagicSock.Get()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if r := ms.GetLastNetcheckReport(ctx); r != nil && r.PreferredDERP != 0 && !h.GetDERPRegionReceivedTime(r.PreferredDERP).IsZero() {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the node's DERP connection: %v", ctx.Err())
		case <-tick.C:
		}
	}
}

// Login is the login name of the user s is logged in as.
func Login(t testing.TB, ctx context.Context, s *tsnet.Server) string {
	t.Helper()
	lc, err := s.LocalClient()
	if err != nil {
		t.Fatal(err)
	}
	st, err := lc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Self == nil {
		t.Fatal("the node has no self in its status")
	}
	u, ok := st.User[st.Self.UserID]
	if !ok || u.LoginName == "" {
		t.Fatalf("the node's user %v has no login name", st.Self.UserID)
	}
	return u.LoginName
}

// Answers reports whether an HTTP request to addr, sent from node n, gets any answer. A port
// with no listener resets the connection (or refuses it); one that hangs counts as an answer,
// so a check that a port closed cannot pass by waiting.
func Answers(ctx context.Context, n *tsnet.Server, addr string) bool {
	c, err := n.Dial(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return false
	}
	_, err = c.Read(make([]byte, 1))
	return err == nil || errors.Is(err, os.ErrDeadlineExceeded)
}
