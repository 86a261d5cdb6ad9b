package shot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"buddi/plugins/developer/shot"
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

	got, err := c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/", Width: 390, Height: 844, Check: ok})
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
	if _, err := c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/away", Width: 390, Height: 844, Check: ok}); err == nil || !strings.Contains(err.Error(), "off its own origin") {
		t.Errorf("a redirect to another port: %v", err)
	}
	_, _ = c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/later", Width: 390, Height: 844, Check: ok})
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the browser reached the other port %d times", n)
	}
	// A process that no longer holds its socket is not asked at all.
	before := pageHits.Load()
	gone := errors.New("web no longer listens on its port")
	if _, err := c.Screenshot(ctx, shot.Page{Addr: addr, Path: "/", Width: 390, Height: 844, Check: func() error { return gone }}); !errors.Is(err, gone) {
		t.Errorf("a socket given up: %v", err)
	}
	if pageHits.Load() != before {
		t.Error("the page was asked for after its socket was given up")
	}
}
