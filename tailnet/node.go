// Package tailnet is buddi's embedded tsnet node (seed 000 §12, seed 004 "Owner and surface
// authentication"): one node, no tailscaled, that serves the dashboard on the owner's tailnet
// and, when the owner allows it, each developer preview on a port of its own. The caller's
// tailnet identity (WhoIs on the connection) is the credential; only the owner's login gets in.
package tailnet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/envknob"
	"tailscale.com/ipn"
	"tailscale.com/tsnet"
)

// DefaultHostname is the node's name on the tailnet when none is set.
const DefaultHostname = "buddi"

// Config is how the node is brought up.
type Config struct {
	// Dir holds the node's state (<home>/tsnet). Required: a state stored elsewhere would be
	// shared with, or lost to, whatever else uses tsnet's default.
	Dir string
	// Hostname is the node's name on the tailnet. Default DefaultHostname.
	Hostname string
	// ControlURL is the coordination server; empty is Tailscale's own.
	ControlURL string
	// AuthKey logs the node in without a browser. A node already logged in (its state in Dir)
	// ignores it.
	AuthKey string
	// AuthKeyFrom says where AuthKey came from ("TS_AUTHKEY", "the vault"), for the sentence
	// that says it was refused.
	AuthKeyFrom string
	// NoHTTPS keeps the node from serving HTTPS even when the tailnet offers certificates (a
	// certificate puts the node's name in the public Certificate Transparency logs).
	NoHTTPS bool
	// Ephemeral asks the control server to forget the node when it goes offline (tests).
	Ephemeral bool
	// Log receives what the node reports, at debug level. Nil discards.
	Log *slog.Logger
}

// The node's states as Status reports them.
const (
	StateStarting      = "starting"       // coming up
	StateNeedsLogin    = "needs-login"    // waiting for a login (LoginURL) or a valid auth key
	StateNeedsApproval = "needs-approval" // the tailnet's admin must approve the machine
	StateRunning       = "running"        // on the tailnet
	StateStopped       = "stopped"        // logged in but not connected, or closed
)

// Status is the node's state for health, doctor and the status command.
type Status struct {
	State    string   `json:"state"`               // one of the State… constants
	Hostname string   `json:"hostname"`            // the name it asked for
	DNSName  string   `json:"dns_name,omitempty"`  // its MagicDNS name, without the final dot
	IPs      []string `json:"ips,omitempty"`       // its tailnet addresses
	HTTPS    bool     `json:"https"`               // the control plane offers it a certificate
	LoginURL string   `json:"login_url,omitempty"` // where to log the node in, when it needs it
	Error    string   `json:"error,omitempty"`     // what went wrong, in one sentence
	Control  string   `json:"control,omitempty"`   // the coordination server, when not Tailscale's
	// Since is when the node entered its state.
	Since time.Time `json:"since"`
}

// stuckAfter is how long the node may be starting before the status calls it a problem.
const stuckAfter = 30 * time.Second

// Problem is the one sentence health and doctor say when the node is not on the tailnet, or "".
func (s Status) Problem() string {
	switch s.State {
	case StateRunning:
		return ""
	case StateNeedsLogin:
		if s.Error != "" {
			return "the tailnet node is not logged in: " + s.Error
		}
		if s.LoginURL != "" {
			return "the tailnet node needs a login: open " + s.LoginURL + " (or set an auth key with `buddi tailnet authkey`)"
		}
		return "the tailnet node needs a login: set an auth key with `buddi tailnet authkey` or TS_AUTHKEY"
	case StateNeedsApproval:
		return "the tailnet node waits for the tailnet's admin to approve the machine"
	case StateStopped:
		return "the tailnet node is stopped: restart buddi, or turn the tailnet off with `buddi tailnet off`"
	default:
		if s.Error != "" {
			return "the tailnet node is not up yet: " + s.Error
		}
		if !s.Since.IsZero() && time.Since(s.Since) > stuckAfter {
			control := s.Control
			if control == "" {
				control = "Tailscale's coordination server"
			}
			return fmt.Sprintf("the tailnet node has been connecting for %s: check that this machine reaches %s (TS_CONTROL_URL chooses another)",
				time.Since(s.Since).Round(time.Second), control)
		}
		return ""
	}
}

// Caller is who is on the other end of a tailnet connection.
type Caller struct {
	Login string // the user's login name (the owner's, or someone else's)
	Node  string // the calling machine's name
	// Tagged: the calling machine is tagged, so it acts for no user (its login is a
	// placeholder shared by every tagged machine) and is never the owner.
	Tagged bool
}

// Node is the embedded tsnet node.
type Node struct {
	cfg    Config
	srv    *tsnet.Server
	lc     *local.Client
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	status  Status
	running chan struct{} // closed when the node first reaches Running
	changed chan struct{} // closed and replaced on every status change
	closed  bool
}

// Start brings the node up in the background: it returns once the node has started, without
// waiting for a login (Status and WaitRunning say how far it got). An error means it could not
// start at all: its state directory, or tsnet's own start.
func Start(cfg Config) (*Node, error) {
	if cfg.Dir == "" {
		return nil, errors.New("tailnet: the node needs a state directory")
	}
	if cfg.Hostname == "" {
		cfg.Hostname = DefaultHostname
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the tailnet node's directory %s: %w", cfg.Dir, err)
	}
	// The node's own logs stay on this machine: no upload to the log service.
	envknob.SetNoLogsNoSupport()
	log := cfg.Log.With("service", "tailnet")
	srv := &tsnet.Server{
		Dir: cfg.Dir, Hostname: cfg.Hostname, ControlURL: cfg.ControlURL, AuthKey: cfg.AuthKey,
		Ephemeral: cfg.Ephemeral,
		Logf:      func(format string, args ...any) { log.Debug(fmt.Sprintf(format, args...)) },
		UserLogf:  func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) },
	}
	n := &Node{cfg: cfg, srv: srv, log: log, done: make(chan struct{}), running: make(chan struct{}), changed: make(chan struct{}),
		status: Status{State: StateStarting, Hostname: cfg.Hostname, Control: cfg.ControlURL, Since: time.Now()}}
	if err := srv.Start(); err != nil {
		// tsnet's Close can panic after a failed Start: the server is dropped, not closed.
		return nil, fmt.Errorf("start the tailnet node: %w", err)
	}
	lc, err := srv.LocalClient()
	if err != nil {
		n.closeServer()
		return nil, fmt.Errorf("start the tailnet node: %w", err)
	}
	n.lc = lc
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		n.watch(ctx)
	}()
	return n, nil
}

// watch follows the node's state on its bus until ctx ends, reconnecting to the bus if it
// drops. Every network map from the control server comes on the bus as the node's own entry
// (Notify.SelfChange, on every platform); the full map it leaves out (it rides the bus on
// Windows alone, and buddi reads nothing from it).
func (n *Node) watch(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := n.lc.WatchIPNBus(ctx, ipn.NotifyInitialState|ipn.NotifyNoNetMap)
		if err != nil {
			if ctx.Err() == nil {
				n.log.Warn("watch the tailnet node's state", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		for {
			note, err := w.Next()
			if err != nil {
				break
			}
			n.apply(ctx, note)
		}
		w.Close()
	}
}

// apply folds one notification from the node's bus into the status.
func (n *Node) apply(ctx context.Context, note ipn.Notify) {
	if note.ErrMessage != nil {
		msg := *note.ErrMessage
		if keyRefused.MatchString(msg) {
			fix := "set a valid one with `buddi tailnet authkey`"
			if n.cfg.AuthKeyFrom == "TS_AUTHKEY" {
				fix = "set a valid one in TS_AUTHKEY (it wins over the vault's)"
			}
			msg = "the auth key was refused (" + msg + "): " + fix
		}
		n.log.Warn("tailnet node", "error", msg)
		n.set(func(s *Status) { s.Error = msg })
	}
	if note.BrowseToURL != nil && *note.BrowseToURL != "" {
		url := *note.BrowseToURL
		n.log.Warn("the tailnet node needs a login: open " + url)
		n.set(func(s *Status) { s.LoginURL, s.State, s.Error = url, StateNeedsLogin, "" })
	}
	if note.State == nil {
		// A new network map may rename the node, change its addresses or its certificates.
		if note.SelfChange != nil && n.Status().State == StateRunning {
			n.refresh(ctx, false)
		}
		return
	}
	switch *note.State {
	case ipn.Running:
		n.refresh(ctx, true)
	case ipn.NeedsLogin:
		n.enter(StateNeedsLogin)
	case ipn.NeedsMachineAuth:
		n.enter(StateNeedsApproval)
	case ipn.Stopped:
		n.enter(StateStopped)
	case ipn.Starting, ipn.NoState:
		n.enter(StateStarting)
	}
}

// keyRefused matches the coordination server's words for an auth key it refused.
var keyRefused = regexp.MustCompile(`(?i)auth ?key|invalid key|key (?:expired|revoked|not found)`)

// enter moves the node to state, noting when.
func (n *Node) enter(state string) {
	n.set(func(s *Status) {
		if s.State != state {
			s.State, s.Since = state, time.Now()
		}
	})
}

// refresh reads the node's addresses, MagicDNS name and certificate domains: when it reaches
// Running (entering), and when a new network map may have changed them. The status changes
// (and Changed fires) only when one of them did.
func (n *Node) refresh(ctx context.Context, entering bool) {
	st, err := n.lc.StatusWithoutPeers(ctx)
	if err != nil {
		n.log.Warn("read the tailnet node's status", "err", err)
		return
	}
	var ips []string
	for _, ip := range st.TailscaleIPs {
		ips = append(ips, ip.String())
	}
	dns := ""
	if st.Self != nil {
		dns = strings.TrimSuffix(st.Self.DNSName, ".")
	}
	https := !n.cfg.NoHTTPS && len(st.CertDomains) > 0 && st.CurrentTailnet != nil && st.CurrentTailnet.MagicDNSEnabled
	was := n.Status()
	if was.State == StateRunning && was.DNSName == dns && slices.Equal(was.IPs, ips) && was.HTTPS == https &&
		was.LoginURL == "" && was.Error == "" {
		return
	}
	switch {
	case entering:
		n.log.Info("on the tailnet", "name", dns, "ips", strings.Join(ips, " "))
	case was.DNSName != dns || !slices.Equal(was.IPs, ips):
		n.log.Info("the control server changed the node's name or addresses", "name", dns, "ips", strings.Join(ips, " "),
			"was_name", was.DNSName, "was_ips", strings.Join(was.IPs, " "))
	}
	n.set(func(s *Status) {
		if s.State != StateRunning {
			s.Since = time.Now()
		}
		s.State, s.IPs, s.DNSName, s.HTTPS, s.LoginURL, s.Error = StateRunning, ips, dns, https, "", ""
	})
}

// Status is the node's state now.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.status
	s.IPs = append([]string(nil), s.IPs...)
	return s
}

// Changed returns a channel closed at the next change of Status.
func (n *Node) Changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.changed
}

// WaitRunning waits until the node is on the tailnet, or ctx ends.
func (n *Node) WaitRunning(ctx context.Context) error {
	select {
	case <-n.running:
		return nil
	case <-ctx.Done():
		st := n.Status()
		if p := st.Problem(); p != "" {
			return fmt.Errorf("%s: %w", p, ctx.Err())
		}
		return fmt.Errorf("the tailnet node is not up: %w", ctx.Err())
	}
}

// Listen listens on a TCP port of the node's tailnet addresses.
func (n *Node) Listen(port int) (net.Listener, error) {
	l, err := n.srv.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("listen on the tailnet's port %d: %w", port, err)
	}
	return l, nil
}

// ListenTLS listens on a TCP port with the tailnet's certificate for the node's name. It needs
// the node running and a control plane that offers certificates (Status.HTTPS).
func (n *Node) ListenTLS(port int) (net.Listener, error) {
	if st := n.Status(); st.State != StateRunning || !st.HTTPS {
		return nil, errors.New("the tailnet offers this node no certificate: enable HTTPS for the tailnet to serve it")
	}
	// Not tsnet's ListenTLS: it waits, without a deadline, for the node to be up.
	l, err := n.srv.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("listen with TLS on the tailnet's port %d: %w", port, err)
	}
	return tls.NewListener(l, &tls.Config{GetCertificate: n.lc.GetCertificate}), nil
}

// WhoIs says who is on the other end of a connection that arrived on the node, from its remote
// address. An address the node cannot place is an error: the caller is refused.
func (n *Node) WhoIs(ctx context.Context, remoteAddr string) (Caller, error) {
	who, err := n.lc.WhoIs(ctx, remoteAddr)
	if err != nil {
		return Caller{}, fmt.Errorf("ask the tailnet node who is calling from %s: %w", remoteAddr, err)
	}
	if who.UserProfile == nil || who.UserProfile.LoginName == "" {
		return Caller{}, fmt.Errorf("the tailnet node does not know the user calling from %s", remoteAddr)
	}
	if who.Node == nil { // whether the machine is tagged cannot be told: fail closed
		return Caller{}, fmt.Errorf("the tailnet node does not know the machine calling from %s", remoteAddr)
	}
	c := Caller{Login: who.UserProfile.LoginName, Tagged: who.Node.IsTagged(), Node: strings.TrimSuffix(who.Node.Name, ".")}
	if i := strings.IndexByte(c.Node, '.'); i > 0 {
		c.Node = c.Node[:i]
	}
	return c, nil
}

// Names are the names a request to the node may carry in its Host: its MagicDNS name, that
// name's first label, and its tailnet addresses, as the control server gives them now. The
// hostname it asked for counts only until the control server names it: a node renamed (its
// name was taken) no longer answers to a name that belongs to another machine.
func (n *Node) Names() []string {
	st := n.Status()
	var out []string
	if st.DNSName == "" {
		out = append(out, strings.ToLower(st.Hostname))
	} else {
		dns := strings.ToLower(st.DNSName)
		short, _, _ := strings.Cut(dns, ".")
		out = append(out, dns, short)
	}
	return append(out, st.IPs...)
}

// Close takes the node off the tailnet. It gives tsnet ten seconds; a close that hangs is left
// behind rather than holding buddi's stop.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	n.cancel()
	<-n.done
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.closeServer()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		n.log.Warn("the tailnet node did not close within 10s; leaving it")
	}
	n.set(func(s *Status) { s.State = StateStopped; s.IPs = nil })
	return nil
}

func (n *Node) closeServer() {
	defer func() {
		if r := recover(); r != nil {
			n.log.Warn("closing the tailnet node panicked", "panic", r)
		}
	}()
	_ = n.srv.Close()
}

// set changes the status and wakes those waiting on Changed.
func (n *Node) set(f func(*Status)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f(&n.status)
	close(n.changed)
	n.changed = make(chan struct{})
	if n.status.State == StateRunning {
		select {
		case <-n.running:
		default:
			close(n.running)
		}
	}
}
