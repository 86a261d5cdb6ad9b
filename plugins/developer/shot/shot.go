// Package shot takes screenshots of a page in headless Chromium, driven through its DevTools
// pipe (package devtools), for developer.screenshot. Each screenshot starts its own browser with a throwaway profile and
// ends it: nothing of one page reaches the next.
//
// The browser runs in an OS box (package sandbox), since the page is the agent's code and a
// renderer bug would otherwise run as the owner: its workspace is the throwaway profile, and
// buddi's data directory and the owner's secrets are hidden from it as from the developer
// plugin's commands ([Page.Box]). Inside the box, Chromium keeps its own sandbox (its user,
// PID and network namespaces and seccomp filter for renderers) when buddi is not root;
// Chromium refuses to run as root with it, so as root it runs with --no-sandbox, inside the
// box only. A box that cannot be made is an error: the browser never runs outside one.
//
// The browser reaches one origin and nothing else: every connection it opens, for the page,
// a redirect, a frame, an image, a script, a worker or a websocket, goes through a proxy of
// this package's own (Chromium's --proxy-server, with loopback not exempted), which lets
// through only requests for the page's origin and asks, for each of them, that the process
// still holds its socket (Page.Dial). A redirect or a navigation to another port of loopback
// (buddi's dashboard, another process's server) gets a refusal from the proxy, never the
// other server's answer. A proxy sees every connection whatever made it, which the DevTools
// Fetch domain, bound to one page's requests, does not (service workers, websockets).
package shot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"buddi/internal/devtools"
	"buddi/sandbox"
)

// ErrNoBrowser means no Chromium was found.
var ErrNoBrowser = errors.New("no Chromium on this machine: install Debian's chromium package (or Google Chrome) for screenshots")

// Find returns the path of a Chromium, or ErrNoBrowser.
func Find() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Page is what a screenshot loads: a path on one origin, http://Addr, and the check that
// lets the browser reach it.
type Page struct {
	// Addr is the origin's host and port, the verified socket's own loopback address
	// ("127.0.0.1:5173", "[::1]:5173"): the only one the browser reaches.
	Addr string
	// Path is the page's path and query, starting with "/".
	Path string
	// Width and Height are the window's, in CSS pixels.
	Width, Height int
	// Check is asked before every request the browser makes of the origin, and before every
	// connection to it: nil while the process still holds the socket at Addr.
	Check func() error
	// Box is the sandbox the browser runs in: its Home (buddi's data directory, required) and
	// Hidden (the owner's secrets) are used; its workspace is the browser's throwaway profile,
	// and nothing else is writable.
	Box sandbox.Policy
}

// Shot is a screenshot and what the page was kept from.
type Shot struct {
	PNG     []byte   // the whole page
	Refused []string // requests the page made outside its origin, refused (the first few)
	// ChromeSandbox is whether the browser kept its own sandbox on inside the box (it cannot
	// as root).
	ChromeSandbox bool
}

// maxRefused is how many refused requests a Shot lists.
const maxRefused = 5

// Chromium takes screenshots with the browser at Path (Find's when empty).
type Chromium struct {
	Path string // the browser's executable; empty: Find's
}

// Screenshot loads the page in a window Width × Height and returns a PNG of the whole page.
// It fails, capturing nothing, when the page ends up anywhere but its own origin.
func (c Chromium) Screenshot(ctx context.Context, p Page) (Shot, error) {
	if p.Check == nil || p.Addr == "" || !strings.HasPrefix(p.Path, "/") {
		return Shot{}, errors.New("a screenshot needs the page's address, its path and the check of its socket")
	}
	if p.Box.Home == "" {
		return Shot{}, errors.New("a screenshot needs the box the browser runs in (its data directory to hide)")
	}
	path := c.Path
	if path == "" {
		var err error
		if path, err = Find(); err != nil {
			return Shot{}, err
		}
	}
	if err := p.Check(); err != nil {
		return Shot{}, err
	}
	gate, err := startGate(p)
	if err != nil {
		return Shot{}, err
	}
	defer gate.close()
	profile, err := os.MkdirTemp("", "buddi-shot-*")
	if err != nil {
		return Shot{}, err
	}
	defer os.RemoveAll(profile)
	// Chromium's own sandbox runs inside the box, except as root, where Chromium refuses it;
	// it makes namespaces of its own, which the box then allows.
	own := os.Geteuid() != 0
	box := sandbox.Policy{Home: p.Box.Home, Hidden: p.Box.Hidden, Workspace: profile, Namespaces: own}
	if err := box.Validate(); err != nil {
		return Shot{}, fmt.Errorf("the browser's box: %w", err)
	}
	var launched *sandbox.Launched
	defer func() {
		if launched != nil {
			launched.Finish()
		}
	}()
	cmd := &exec.Cmd{Path: path, Args: append(append([]string{path}, browserFlags(own, profile, p, gate.addr())...), "about:blank"),
		Dir: profile, Env: browserEnv(profile),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}}
	// The browser starts in its box, or not at all: a box that cannot be made is an error
	// before anything runs.
	b, err := devtools.Start(cmd, func(cmd *exec.Cmd) error {
		pr, err := sandbox.Prepare(cmd, box) // on an error, cmd refuses to start
		if err != nil {
			return fmt.Errorf("the browser was not started: its box could not be made: %w", err)
		}
		if err := cmd.Start(); err != nil {
			_, _ = pr.Started() // releases what Prepare held
			return fmt.Errorf("start the browser: %w", err)
		}
		if launched, err = pr.Started(); err != nil {
			return fmt.Errorf("the browser was not started: %w", err)
		}
		return nil
	})
	if err != nil {
		return Shot{}, err
	}
	defer b.Close() // the browser has exited when it returns
	page, err := b.NewPage(ctx)
	if err != nil {
		return Shot{}, fmt.Errorf("start the browser: %w", err)
	}
	origin := "http://" + p.Addr
	url := origin + p.Path
	if err := page.SetViewport(ctx, p.Width, p.Height); err != nil {
		return Shot{Refused: gate.refusals()}, fmt.Errorf("load %s: %w", url, err)
	}
	if err := page.Navigate(ctx, url); err != nil {
		return Shot{Refused: gate.refusals()}, fmt.Errorf("load %s: %w", url, err)
	}
	// Let the page's scripts draw.
	settle, cancelSettle := context.WithTimeout(ctx, 2*time.Second)
	waitComplete(settle, page)
	cancelSettle()
	if err := onOrigin(ctx, page, origin); err != nil {
		return Shot{Refused: gate.refusals()}, err
	}
	png, err := page.Screenshot(ctx)
	if err != nil {
		return Shot{Refused: gate.refusals()}, fmt.Errorf("screenshot %s: %w", url, err)
	}
	// A navigation that began as the picture was taken shows no other server's page (the
	// proxy refused it), but the picture is not of the page asked for.
	if err := onOrigin(ctx, page, origin); err != nil {
		return Shot{Refused: gate.refusals()}, err
	}
	return Shot{PNG: png, Refused: gate.refusals(), ChromeSandbox: own}, nil
}

// browserFlags are the browser's flags: headless, quiet, in the throwaway profile, with a
// window of the page's size, every connection through the proxy at proxy, and Chromium's
// own sandbox on when own (off as root, where Chromium refuses it).
func browserFlags(own bool, profile string, p Page, proxy string) []string {
	flags := []string{
		"--no-first-run", "--no-default-browser-check", "--headless", "--hide-scrollbars", "--mute-audio",
		"--disable-background-networking", "--enable-features=NetworkService,NetworkServiceInProcess",
		"--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows", "--disable-breakpad",
		"--disable-client-side-phishing-detection", "--disable-default-apps", "--disable-dev-shm-usage",
		"--disable-extensions", "--disable-features=Translate,BlinkGenPropertyTrees", "--disable-hang-monitor",
		"--disable-ipc-flooding-protection", "--disable-popup-blocking", "--disable-prompt-on-repost",
		"--disable-renderer-backgrounding", "--disable-sync", "--force-color-profile=srgb", "--metrics-recording-only",
		"--safebrowsing-disable-auto-update", "--enable-automation", "--password-store=basic", "--use-mock-keychain",
	}
	if !own {
		flags = append(flags, "--no-sandbox")
	}
	return append(flags, "--disable-gpu", "--enable-unsafe-swiftshader",
		"--user-data-dir="+profile, fmt.Sprintf("--window-size=%d,%d", p.Width, p.Height),
		"--proxy-server=http://"+proxy,
		// Loopback goes through the proxy too (Chromium exempts it by default), and so does
		// every other host; WebRTC sends nothing the proxy does not carry.
		"--proxy-bypass-list=<-loopback>",
		"--force-webrtc-ip-handling-policy", "--webrtc-ip-handling-policy=disable_non_proxied_udp", "--disable-quic",
		// Nothing of the browser's own to fetch, which the proxy would only refuse.
		"--disable-component-update", "--disable-domain-reliability", "--no-pings")
}

// waitComplete waits, until ctx ends, for the page's document to be complete.
func waitComplete(ctx context.Context, page *devtools.Page) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var done bool
		if err := page.Evaluate(ctx, `document.readyState === 'complete'`, &done); err == nil && done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// browserEnv is the browser's whole environment: its home, configuration and caches in the
// throwaway profile, a private /tmp.
func browserEnv(profile string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + profile, "LANG=C.UTF-8", "TMPDIR=/tmp",
		"XDG_CONFIG_HOME=" + filepath.Join(profile, "config"), "XDG_CACHE_HOME=" + filepath.Join(profile, "cache"),
	}
}

// onOrigin checks that the browser's page is still on origin.
func onOrigin(ctx context.Context, page *devtools.Page, origin string) error {
	var at string
	if err := page.Evaluate(ctx, `document.location.toString()`, &at); err != nil {
		return fmt.Errorf("read the page's address: %w", err)
	}
	if at != origin && !strings.HasPrefix(at, origin+"/") {
		return fmt.Errorf("the page went to %s, off its own origin %s, which the screenshot does not reach: nothing was captured", clip(at), origin)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// gate is the proxy the browser goes through: requests for the page's origin reach the
// process's socket, after Page.Check; everything else is refused and noted.
type gate struct {
	page Page
	l    net.Listener
	srv  *http.Server
	base context.CancelFunc // ends the requests in flight

	mu      sync.Mutex
	refused []string
	tunnels map[net.Conn]bool // CONNECT tunnels open (both ends), closed with the gate
	closed  bool
	wg      sync.WaitGroup // the tunnels' copies
}

func startGate(p Page) (*gate, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("open the screenshot's proxy: %w", err)
	}
	base, cancel := context.WithCancel(context.Background())
	g := &gate{page: p, l: l, base: cancel, tunnels: map[net.Conn]bool{}}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		if err := p.Check(); err != nil {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", p.Addr)
	}
	forward := &httputil.ReverseProxy{
		Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true, ResponseHeaderTimeout: time.Minute},
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", p.Addr
			pr.Out.Host = p.Addr
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "the process did not answer: "+err.Error(), http.StatusBadGateway)
		},
	}
	g.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return base },
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodConnect {
				g.tunnel(w, r)
				return
			}
			if r.URL.Scheme != "http" || r.URL.Host != p.Addr {
				g.refuse(w, r, r.URL.String())
				return
			}
			if r.Header.Get("Upgrade") != "" { // websockets come as CONNECT tunnels
				g.refuse(w, r, r.URL.String())
				return
			}
			if err := p.Check(); err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			forward.ServeHTTP(w, r)
		})}
	go func() { _ = g.srv.Serve(l) }()
	return g, nil
}

func (g *gate) addr() string { return g.l.Addr().String() }

// refuse answers a request for another origin with a page that says so, and notes it when
// the page made it: one for loopback (another port, another server of this machine), or one
// that names the page as its referrer. The browser's own requests (its updates, its
// accounts) are refused without a note.
func (g *gate) refuse(w http.ResponseWriter, r *http.Request, what string) {
	host := r.Host
	if r.Method != http.MethodConnect {
		host = r.URL.Host
	}
	if loopback(host) || strings.HasPrefix(r.Referer(), "http://"+g.page.Addr+"/") {
		g.mu.Lock()
		if len(g.refused) < maxRefused && !slices.Contains(g.refused, clip(what)) {
			g.refused = append(g.refused, clip(what))
		}
		g.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, "buddi refused this request: a screenshot reaches only http://"+g.page.Addr+"\n")
}

// tunnel opens a CONNECT tunnel (a websocket, or HTTPS) to the page's origin only.
func (g *gate) tunnel(w http.ResponseWriter, r *http.Request) {
	if r.Host != g.page.Addr {
		g.refuse(w, r, "a connection to "+r.Host)
		return
	}
	if err := g.page.Check(); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var d net.Dialer
	back, err := d.DialContext(r.Context(), "tcp", g.page.Addr)
	if err != nil {
		http.Error(w, "the process did not answer: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		back.Close()
		http.Error(w, "no tunnel", http.StatusInternalServerError)
		return
	}
	front, buf, err := hj.Hijack()
	if err != nil {
		back.Close()
		return
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		front.Close()
		back.Close()
		return
	}
	g.tunnels[front], g.tunnels[back] = true, true
	g.wg.Add(2)
	g.mu.Unlock()
	_, _ = front.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n"))
	end := func() {
		front.Close()
		back.Close()
		g.mu.Lock()
		delete(g.tunnels, front)
		delete(g.tunnels, back)
		g.mu.Unlock()
	}
	go func() {
		defer g.wg.Done()
		_, _ = io.Copy(back, buf) // what the browser sent, buffered or not
		end()
	}()
	go func() {
		defer g.wg.Done()
		_, _ = io.Copy(front, back)
		end()
	}()
}

// loopback reports whether host (with or without a port) names this machine's loopback.
func loopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

func (g *gate) refusals() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.refused...)
}

// close stops the proxy: its listener, the requests in flight and the tunnels.
func (g *gate) close() {
	g.base()
	_ = g.srv.Close()
	g.mu.Lock()
	g.closed = true
	for c := range g.tunnels {
		c.Close()
	}
	g.mu.Unlock()
	g.wg.Wait()
}
