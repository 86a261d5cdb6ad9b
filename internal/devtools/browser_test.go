package devtools_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"buddi/internal/devtools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start starts a headless Chromium with a throwaway profile, closed at the test's end. A
// machine without one skips the test (CI installs Debian's chromium package).
func start(t *testing.T) *devtools.Browser {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium on this machine (chromium, chromium-browser, google-chrome): install Debian's chromium package to run the DevTools tests")
	}
	profile := t.TempDir()
	args := []string{path, "--headless", "--hide-scrollbars", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--user-data-dir=" + profile}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses its own sandbox as root
	}
	cmd := &exec.Cmd{Path: path, Args: append(args, "about:blank"), Env: []string{"HOME=" + profile, "PATH=/usr/bin:/bin"}}
	b, err := devtools.Start(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A page loaded through the pipe: its window set, its load awaited (the image it loads
// included), a value read from it, a PNG of it as wide as its window; and the browser opened
// no port for the protocol.
func TestAPageLoadedAndCaptured(t *testing.T) {
	// The page's image is held until the test has seen that Navigate still waits for it.
	imageAsked, release := make(chan struct{}), make(chan struct{})
	var askedOnce sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>hello devtools</title><body style="margin:0;background:#0a0"><img src="/slow.svg"><div style="height:2000px"></div>`)
		case "/slow.svg":
			askedOnce.Do(func() { close(imageAsked) })
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "image/svg+xml")
			fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`)
		}
	}))
	t.Cleanup(srv.Close)
	b := start(t)
	ctx := testContext(t)
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetViewport(ctx, 390, 844); err != nil {
		t.Fatal(err)
	}
	navigated := make(chan error, 1)
	go func() { navigated <- p.Navigate(ctx, srv.URL+"/") }()
	select {
	case <-imageAsked:
	case err := <-navigated:
		close(release)
		t.Fatalf("Navigate returned (%v) before the page asked for its image", err)
	case <-ctx.Done():
		t.Fatal("the page never asked for its image")
	}
	select {
	case err := <-navigated:
		t.Errorf("Navigate returned (%v) while the page's image was still held", err)
	default:
	}
	close(release)
	if err := <-navigated; err != nil {
		t.Fatal(err)
	}
	var title, at string
	if err := p.Evaluate(ctx, `document.title`, &title); err != nil || title != "hello devtools" {
		t.Errorf("the title: %q, %v", title, err)
	}
	if err := p.Evaluate(ctx, `document.location.toString()`, &at); err != nil || at != srv.URL+"/" {
		t.Errorf("the location: %q, %v", at, err)
	}
	var ee *devtools.EvalError
	if err := p.Evaluate(ctx, `nosuchname.x`, nil); !errors.As(err, &ee) || !strings.Contains(ee.Text, "nosuchname") {
		t.Errorf("a failing script: %v", err)
	}
	data, err := p.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if w := img.Bounds().Dx(); w != 390 {
		t.Errorf("the screenshot is %d pixels wide, want the window's 390", w)
	}
	if r, g, _, _ := img.At(200, 400).RGBA(); r != 0 || g>>8 != 0xaa {
		t.Errorf("the screenshot's pixel is not the page's green: %x %x", r, g)
	}
	// The pipe is the only way in: no DevToolsActivePort file, which a browser listening on
	// a port writes in its profile.
	if _, err := os.Stat(filepath.Join(profileOf(t, b), "DevToolsActivePort")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the browser wrote DevToolsActivePort: %v", err)
	}
}

// profileOf reads the browser's --user-data-dir from its command line.
func profileOf(t *testing.T, b *devtools.Browser) string {
	t.Helper()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", b.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for arg := range strings.SplitSeq(string(cmdline), "\x00") {
		if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			return dir
		}
	}
	t.Fatal("no --user-data-dir")
	return ""
}

// The browser's refusals come back as errors: a navigation it could not make, a command it
// does not know.
func TestTheBrowsersRefusals(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	b := start(t)
	ctx := testContext(t)
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ne *devtools.NavigateError
	if err := p.Navigate(ctx, closed); !errors.As(err, &ne) || ne.Text != "net::ERR_CONNECTION_REFUSED" {
		t.Errorf("a closed port: %v", err)
	}
	var de *devtools.Error
	if err := p.Call(ctx, "Page.noSuchMethod", nil, nil); !errors.As(err, &de) || de.Code != -32601 || de.Method != "Page.noSuchMethod" {
		t.Errorf("an unknown method: %v", err)
	}
	// The connection still works after both.
	var v int
	if err := p.Evaluate(ctx, `6 * 7`, &v); err != nil || v != 42 {
		t.Errorf("after the refusals: %d, %v", v, err)
	}
}

// A browser that dies does not leave its caller waiting: a command waiting for its answer,
// and every later one, fail with ErrClosed and how the browser ended.
func TestABrowserThatDies(t *testing.T) {
	b := start(t)
	ctx := testContext(t)
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A script that never ends keeps Runtime.evaluate waiting; it logs first, so the test
	// knows it runs.
	if err := p.Call(ctx, "Runtime.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	logged := p.Subscribe("Runtime.consoleAPICalled")
	defer logged.Close()
	waiting := make(chan error, 1)
	go func() { waiting <- p.Evaluate(ctx, `console.log("looping"); for (;;) {}`, nil) }()
	if _, err := logged.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(b.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waiting:
		if !errors.Is(err, devtools.ErrClosed) {
			t.Errorf("the command waiting: %v, want ErrClosed", err)
		}
	case <-ctx.Done():
		t.Fatal("the caller still waits for a dead browser")
	}
	<-b.Exited()
	err = p.Call(ctx, "Runtime.evaluate", map[string]any{"expression": "1"}, nil)
	if !errors.Is(err, devtools.ErrClosed) || !strings.Contains(err.Error(), "the browser exited") {
		t.Errorf("a command to a dead browser: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("closing a dead browser: %v", err)
	}
}

// Close ends the browser: its process has been waited for when Close returns.
func TestCloseEndsTheBrowser(t *testing.T) {
	b := start(t)
	if _, err := b.NewPage(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Exited():
	default:
		t.Fatal("the browser still runs after Close")
	}
	if err := b.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// A start that fails leaves nothing behind: the error is the start's own.
func TestAStartThatFails(t *testing.T) {
	refused := errors.New("no box today")
	cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"/bin/true"}}
	if _, err := devtools.Start(cmd, func(*exec.Cmd) error { return refused }); !errors.Is(err, refused) {
		t.Errorf("got %v, want the start's error", err)
	}
	cmd = &exec.Cmd{Path: "/bin/true", Args: []string{"/bin/true"}}
	b, err := devtools.Start(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A program that is no browser: the first command finds the pipe closed.
	if _, err := b.NewPage(testContext(t)); !errors.Is(err, devtools.ErrClosed) {
		t.Errorf("a program that exits at once: %v", err)
	}
	_ = b.Close()
}
