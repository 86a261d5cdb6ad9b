package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"buddi/core/artifact"
	"buddi/core/redact"
	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/surfaces/dashboard"
)

// filesBundle is a dashboard with the Files routes over core's real artifact store.
type filesBundle struct {
	ts    *httptest.Server
	srv   *dashboard.Server
	store *artifact.Store
}

func serveFiles(t *testing.T) *filesBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	store := artifact.NewStore(pool, t.TempDir())
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Seal: key, Files: store,
	})
	b := &filesBundle{ts: httptest.NewServer(srv.Handler()), srv: srv, store: store}
	t.Cleanup(b.ts.Close)
	signIn(t, pool, key, b.ts.Listener.Addr().String())
	return b
}

func (b *filesBundle) save(t *testing.T, a artifact.Artifact, data string) artifact.Artifact {
	t.Helper()
	saved, err := b.store.Save(context.Background(), a, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return saved
}

// fetch GETs path as the signed-in owner and returns the response with its body read.
func (b *filesBundle) fetch(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	resp := get(t, b.ts.URL+path)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// The Files page's list, its versions, its downloads and previews: every file is downloaded
// as an attachment of type application/octet-stream, never sniffed; an agent's HTML is
// previewed as text/plain, and so is an SVG; raster images inline with their own type; other
// types are refused a preview in a sentence.
func TestFilesPageRoutes(t *testing.T) {
	b := serveFiles(t)
	const conv = "0b9e3c1a-2d4f-4e6a-8b7c-9d0e1f2a3b4c"
	v1 := b.save(t, artifact.Artifact{Agent: "scribe", ConversationID: conv, Name: "plan.md", MediaType: "text/markdown", Source: "artifacts.write"}, "# Plan\nfirst")
	v2 := b.save(t, artifact.Artifact{Agent: "scribe", ConversationID: conv, Previous: v1.ID}, "# Plan\nsecond")
	page := b.save(t, artifact.Artifact{Agent: "coder", Name: "évil page.html", MediaType: "text/html"}, `<script>alert(document.cookie)</script>`)
	png := b.save(t, artifact.Artifact{Agent: "coder", Name: "shot.png", MediaType: "image/png"}, "\x89PNG\r\n\x1a\n")
	svg := b.save(t, artifact.Artifact{Agent: "coder", Name: "logo.svg", MediaType: "image/svg+xml"}, `<svg onload="alert(1)"/>`)
	zip := b.save(t, artifact.Artifact{Agent: "owner", Name: "site.zip", MediaType: "application/zip"}, "PK\x03\x04")

	var out struct {
		Files     []artifact.Artifact `json:"files"`
		Truncated bool                `json:"truncated"`
	}
	if code := getJSON(t, b.ts.URL+"/api/files", &out); code != http.StatusOK || len(out.Files) != 5 || out.Truncated {
		t.Fatalf("GET /api/files: %d %+v", code, out)
	}
	if f := out.Files[len(out.Files)-1]; f.ID != v2.ID || f.Versions != 2 || f.Version != 2 || f.Agent != "scribe" || f.ConversationID != conv ||
		f.Name != "plan.md" || f.MediaType != "text/markdown" || f.Bytes != int64(len("# Plan\nsecond")) || f.CreatedAt.IsZero() {
		t.Errorf("the plan, listed: %+v", f)
	}
	if getJSON(t, b.ts.URL+"/api/files?agent=scribe", &out); len(out.Files) != 1 || out.Files[0].ID != v2.ID {
		t.Errorf("by agent: %+v", out.Files)
	}
	if getJSON(t, b.ts.URL+"/api/files?name=SHOT", &out); len(out.Files) != 1 || out.Files[0].ID != png.ID {
		t.Errorf("by name: %+v", out.Files)
	}
	var one struct {
		File        artifact.Artifact   `json:"file"`
		Versions    []artifact.Artifact `json:"versions"`
		Previewable bool                `json:"previewable"`
	}
	if code := getJSON(t, b.ts.URL+"/api/files/"+v1.ID, &one); code != http.StatusOK || one.File.ID != v1.ID || len(one.Versions) != 2 || one.Versions[1].ID != v2.ID || !one.Previewable {
		t.Errorf("GET /api/files/{v1}: %d %+v", code, one)
	}

	// Downloads: exactly that version, as an attachment nothing renders.
	for _, c := range []struct {
		a    artifact.Artifact
		body string
		name string
	}{{v1, "# Plan\nfirst", `filename=plan.md`}, {v2, "# Plan\nsecond", `filename=plan.md`}, {page, `<script>alert(document.cookie)</script>`, `filename*=utf-8''%C3%A9vil%20page.html`}, {svg, `<svg onload="alert(1)"/>`, `filename=logo.svg`}} {
		resp, body := b.fetch(t, "/api/files/"+c.a.ID+"/download")
		h := resp.Header
		if resp.StatusCode != http.StatusOK || body != c.body {
			t.Errorf("download %s: %d %q", c.a.Name, resp.StatusCode, body)
		}
		if cd := h.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, c.name) {
			t.Errorf("download %s: Content-Disposition %q", c.a.Name, cd)
		}
		if h.Get("Content-Type") != "application/octet-stream" || h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("download %s: headers %v", c.a.Name, h)
		}
	}

	// Previews: text as text/plain, a raster image as itself, the rest refused.
	resp, body := b.fetch(t, "/api/files/"+page.ID+"/preview")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("X-Content-Type-Options") != "nosniff" || body != `<script>alert(document.cookie)</script>` {
		t.Errorf("preview of HTML: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	resp, body = b.fetch(t, "/api/files/"+png.ID+"/preview")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" || body != "\x89PNG\r\n\x1a\n" {
		t.Errorf("preview of a PNG: %d %v", resp.StatusCode, resp.Header)
	}
	// An SVG can carry script: it is previewed as its source text, never as an image.
	resp, body = b.fetch(t, "/api/files/"+svg.ID+"/preview")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || body != `<svg onload="alert(1)"/>` {
		t.Errorf("preview of an SVG: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = b.fetch(t, "/api/files/"+zip.ID+"/preview")
	if resp.StatusCode != http.StatusUnsupportedMediaType || strings.Contains(resp.Header.Get("Content-Type"), "zip") || !strings.Contains(body, "site.zip (application/zip) is not an image or text that can be shown here: download it instead") {
		t.Errorf("preview of a zip: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	for _, path := range []string{"/api/files/", "/api/files/%s/download", "/api/files/%s/preview"} {
		for _, id := range []string{"7b0c3a52-5f7e-4a0e-9d8e-2f3c1b9a0d11", "not-an-id"} {
			p := strings.Replace(path, "%s", id, 1)
			if !strings.Contains(p, id) {
				p += id
			}
			resp, body := b.fetch(t, p)
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "there is no file "+id) {
				t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
			}
		}
	}

	// None of it without the owner's credential.
	n := 0
	for _, route := range b.srv.Routes() {
		method, path, _ := strings.Cut(route, " ")
		if !strings.HasPrefix(path, "/api/files") {
			continue
		}
		n++
		req, _ := http.NewRequest(method, b.ts.URL+strings.Replace(path, "{id}", v1.ID, 1), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with no credential: %d", route, resp.StatusCode)
		}
	}
	if n != 4 {
		t.Errorf("%d Files routes registered, want 4", n)
	}
}

// getJSON GETs url as the signed-in owner and decodes the body into v.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp := get(t, url)
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode
}

// TestFilesPreviewIsScrubbed: a text file holding a stored secret is previewed with the
// secret's mark in its place, also when the secret straddles the preview's cut; the download
// stays the file as it was kept.
func TestFilesPreviewIsScrubbed(t *testing.T) {
	const secret = "sk-live-preview-5f3a9c2e71"
	pool := pgtest.Pool(t)
	store := artifact.NewStore(pool, t.TempDir())
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { return health.Report{Status: "ok"} },
		Pool:   pool, Seal: key, Files: store, FilesScrub: redact.New(map[string]string{"API_KEY": secret}),
	})
	b := &filesBundle{ts: httptest.NewServer(srv.Handler()), srv: srv, store: store}
	t.Cleanup(b.ts.Close)
	signIn(t, pool, key, b.ts.Listener.Addr().String())

	note := b.save(t, artifact.Artifact{Name: "notes.txt", MediaType: "text/plain", Agent: "dev"}, "the key is "+secret+"\n")
	resp, body := b.fetch(t, "/api/files/"+note.ID+"/preview")
	if resp.StatusCode != http.StatusOK || strings.Contains(body, secret) || !strings.Contains(body, "API_KEY") {
		t.Fatalf("preview: %d %q, want the secret replaced by its mark", resp.StatusCode, body)
	}
	// The secret straddles the preview's bound: no part of it is shown.
	pad := strings.Repeat("a", dashboard.MaxPreviewText-len(secret)/2)
	long := b.save(t, artifact.Artifact{Name: "long.txt", MediaType: "text/plain", Agent: "dev"}, pad+secret+" tail")
	resp, body = b.fetch(t, "/api/files/"+long.ID+"/preview")
	if resp.StatusCode != http.StatusOK || strings.Contains(body, secret[:len(secret)/2]) || len(body) > dashboard.MaxPreviewText {
		t.Fatalf("preview of a file cut in a secret: %d, %d bytes, shows part of it: %v", resp.StatusCode, len(body), strings.Contains(body, secret[:len(secret)/2]))
	}
	resp, body = b.fetch(t, "/api/files/"+note.ID+"/download")
	if resp.StatusCode != http.StatusOK || body != "the key is "+secret+"\n" {
		t.Fatalf("download: %d %q, want the file as kept", resp.StatusCode, body)
	}
}
