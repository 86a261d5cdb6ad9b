package developer

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/shot"
)

type fakePreviews struct{ absolute bool }

func (f fakePreviews) Check(context.Context, string) (bool, bool, string) {
	return true, f.absolute, ""
}

type keptArtifact struct {
	name, mediaType string
	data            []byte
}

type fakeArtifacts struct{ kept []keptArtifact }

func (f *fakeArtifacts) Save(_ context.Context, _, _, _, name, mediaType, _ string, data []byte) (string, error) {
	f.kept = append(f.kept, keptArtifact{name, mediaType, data})
	return "00000000-0000-4000-8000-00000000000a", nil
}

// developer.preview and developer.screenshot on a real dev server the agent started (Python's
// http.server), the screenshot through real headless Chromium.
func TestPreviewAndScreenshot(t *testing.T) {
	if _, err := shot.Find(); err != nil {
		t.Fatal(err)
	}
	host := &localHost{}
	store := &fakeArtifacts{}
	b := setup(t, withHost(host), func(d *Deps) {
		d.Previews, d.Screenshots, d.Artifacts = fakePreviews{absolute: true}, shot.Chromium{}, store
	})
	t.Cleanup(func() { _ = host.StopAll(context.Background(), agent) })
	b.setMode(t, runlist.ModeRun)
	writeFile(t, b.ws+"/index.html", "<!doctype html><h1>hello screenshot</h1>")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	start := call("start", args(t, map[string]any{"name": "web", "command": fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port), "port": port}))
	b.mustRun(t, start, b.mustDescribe(t, start))
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dev server did not listen")
		}
		time.Sleep(50 * time.Millisecond) // polling a port with a deadline
	}

	for _, name := range []string{"preview", "screenshot"} {
		if got := b.tier(t, call(name, `{"name":"web"}`)); got != plugins.TierAuto {
			t.Errorf("%s: %s, want auto", name, got)
		}
	}
	out := b.run(t, call("preview", `{"name":"web"}`), nil)
	if out.Result.IsError || !strings.Contains(out.Result.Text, "preview panel") || !strings.Contains(out.Result.Text, "absolute paths") || strings.Contains(out.Result.Text, "http://") {
		t.Fatalf("preview: %+v", out.Result)
	}
	if !strings.Contains(string(out.Result.Data), `"src":"/preview/developer/web/"`) {
		t.Fatalf("preview data: %s", out.Result.Data)
	}
	if out := b.run(t, call("preview", `{"name":"ghost"}`), nil); !out.Result.IsError {
		t.Fatal("a preview of no process")
	}

	out = b.run(t, call("screenshot", `{"name":"web","phone":true}`), nil)
	if out.Result.IsError || len(store.kept) != 1 {
		t.Fatalf("screenshot: %+v, kept %d", out.Result, len(store.kept))
	}
	if k := store.kept[0]; k.mediaType != "image/png" || !bytes.HasPrefix(k.data, []byte("\x89PNG")) || k.name != "web-phone.png" {
		t.Fatalf("artifact %s %s %d bytes", k.name, k.mediaType, len(k.data))
	}
	for _, bad := range []string{`{"name":"web","path":"//evil.example/"}`, `{"name":"web","path":"http://x/"}`, `{"name":"web","path":"/a b"}`} {
		if _, err := b.describe(t, call("screenshot", bad)); err == nil {
			t.Errorf("%s was described", bad)
		}
	}
}
