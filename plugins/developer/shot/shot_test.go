package shot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"buddi/plugins/developer/shot"
	"buddi/sandbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The browser reaches the page's origin and nothing else, whatever the page does: a frame, an
// image, a fetch, a websocket and a stylesheet on another loopback port, a redirect there and
// a script's navigation there all stop at the screenshot's proxy. Real headless Chromium, real
// servers on loopback.
func TestTheBrowserReachesOnlyThePagesOrigin(t *testing.T) {
	if _, err := shot.Find(); err != nil {
		t.Fatal(err)
	}
	var otherHits, pageHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		otherHits.Add(1)
		fmt.Fprint(w, `{"approvals": "the owner's"}`)
	}))
	t.Cleanup(other.Close)
	o := other.URL
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pageHits.Add(1)
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><link rel="stylesheet" href="%s/s.css"><h1>hello screenshot</h1>
<iframe src="%s/api/session"></iframe><img src="%s/logo.png"><img src="/own.png">
<script>fetch(%q).catch(() => {}); try { new WebSocket(%q) } catch (e) {}</script>`,
				o, o, o, o+"/api/approvals", strings.Replace(o, "http", "ws", 1)+"/api/live")
		case "/away":
			http.Redirect(w, r, o+"/api/session", http.StatusFound)
		case "/later":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><script>location.href = %q</script>`, o+"/api/session")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(page.Close)
	addr := strings.TrimPrefix(page.URL, "http://")
	ok := func() error { return nil }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := shot.Chromium{}
	box := sandbox.Policy{Home: t.TempDir()}

	got, err := c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/", Width: 390, Height: 844, Check: ok, Box: box})
	if err != nil || !bytes.HasPrefix(got.PNG, []byte("\x89PNG")) {
		t.Fatalf("the page: %v, %d bytes", err, len(got.PNG))
	}
	t.Logf("refused: %q", got.Refused)
	if pageHits.Load() < 2 { // the page and its own image
		t.Errorf("the page's own origin was asked %d times", pageHits.Load())
	}
	if len(got.Refused) == 0 || !strings.Contains(strings.Join(got.Refused, " "), o) {
		t.Errorf("the refused requests: %q", got.Refused)
	}
	if _, err := c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/away", Width: 390, Height: 844, Check: ok, Box: box}); err == nil || !strings.Contains(err.Error(), "off its own origin") {
		t.Errorf("a redirect to another port: %v", err)
	}
	_, _ = c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/later", Width: 390, Height: 844, Check: ok, Box: box})
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the browser reached the other port %d times", n)
	}
	// A process that no longer holds its socket is not asked at all.
	before := pageHits.Load()
	gone := errors.New("web no longer listens on its port")
	if _, err := c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/", Width: 390, Height: 844, Check: func() error { return gone }, Box: box}); !errors.Is(err, gone) {
		t.Errorf("a socket given up: %v", err)
	}
	if pageHits.Load() != before {
		t.Error("the page was asked for after its socket was given up")
	}
}

// The browser runs in the box: a wrapper in place of Chromium, which looks around before it
// starts the real one, sees neither this process (buddi) nor the data directory's secret,
// nor a variable of buddi's environment; and the screenshot is taken, with Chromium's own
// sandbox on unless this is root. Unboxed, the wrapper would see all three and refuse.
func TestTheBrowserRunsInTheBox(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skipf("no box on this machine: %v", err)
	}
	chromium, err := shot.Find()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BUDDI_SHOT_TEST_SECRET", "from-buddis-environment")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "vault.json"), []byte("SEALED"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(t.TempDir(), "chromium")
	script := fmt.Sprintf(`#!/bin/sh
if [ -e /proc/%d ]; then echo "the browser sees buddi's process" >&2; exit 1; fi
if cat %s/vault.json 2>/dev/null; then echo "the browser reads buddi's data" >&2; exit 1; fi
if env | grep -q BUDDI_SHOT_TEST_SECRET; then echo "the browser has buddi's environment" >&2; exit 1; fi
exec %s "$@"
`, os.Getpid(), home, chromium)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// The control: started as the browser was before the box (by this process, with its
	// environment), the wrapper sees this process and refuses.
	if out, err := exec.Command(wrapper, "--version").CombinedOutput(); err == nil || !strings.Contains(string(out), "sees buddi's process") {
		t.Errorf("unboxed, the wrapper: %v %s: the control does not show the hole", err, out)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><h1>boxed</h1>`)
	}))
	t.Cleanup(page.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := shot.Chromium{Path: wrapper}.Screenshot(ctx, shot.Page{Addr: strings.TrimPrefix(page.URL, "http://"), Path: "/",
		Width: 390, Height: 844, Check: func() error { return nil }, Box: sandbox.Policy{Home: home}})
	if err != nil || !bytes.HasPrefix(got.PNG, []byte("\x89PNG")) {
		t.Fatalf("the boxed screenshot: %v, %d bytes", err, len(got.PNG))
	}
	if got.ChromeSandbox != (os.Geteuid() != 0) {
		t.Errorf("Chromium's own sandbox on: %v, as uid %d", got.ChromeSandbox, os.Geteuid())
	}
	if _, err := (shot.Chromium{Path: wrapper}).Screenshot(ctx, shot.Page{Addr: "127.0.0.1:1", Path: "/", Check: func() error { return nil }}); err == nil || !strings.Contains(err.Error(), "box") {
		t.Errorf("a page with no box: %v, want a refusal", err)
	}
}
