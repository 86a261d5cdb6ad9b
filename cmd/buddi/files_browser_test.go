package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/artifact"
)

// The Files page in a real browser over buddi serve: a file with two versions listed once at
// its latest, each version previewed exactly; an agent's HTML shown as its text, its script
// never run; a screenshot drawn as an image; at 1280 and 390 px wide, with screenshots in the
// test's artifact directory.
func TestFilesPageInBrowser(t *testing.T) {
	t.Parallel()
	home, port, vars := env(t)
	s := startServe(t, home, port, vars)
	s.health()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, appDSN(t, home))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// What agents kept, in the store buddi serve reads (<home>/artifacts).
	store := artifact.NewStore(pool, home)
	save := func(a artifact.Artifact, data []byte) artifact.Artifact {
		t.Helper()
		saved, err := store.Save(ctx, a, data)
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
	v1 := save(artifact.Artifact{Agent: "scribe", Name: "plan.md", MediaType: "text/markdown", Source: "artifacts.write"}, []byte("# Plan\nthe first draft"))
	v2 := save(artifact.Artifact{Agent: "scribe", Previous: v1.ID, Source: "artifacts.write"}, []byte("# Plan\nthe second draft"))
	page := save(artifact.Artifact{Agent: "coder", Name: "page.html", MediaType: "text/html", Source: "artifacts.write"}, []byte(`<p>hi</p><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">`))
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for x := range 40 {
		for y := range 20 {
			img.Set(x, y, color.RGBA{R: uint8(6 * x), G: 120, B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	shot := save(artifact.Artifact{Agent: "coder", Name: "home-desktop.png", MediaType: "image/png", Source: "developer.screenshot"}, buf.Bytes())

	p := openPage(t, s)
	p.width(1280)
	p.signIn(vars)
	p.goTo("#/files")
	p.poll("the Files page", `document.querySelectorAll('main tr[data-file]').length === 3 && !!document.querySelector('header nav a.active[data-page=files]')`)
	if got := p.eval(`document.querySelector('main tr[data-file="` + v2.ID + `"]').innerText`); !strings.Contains(got, "plan.md") || !strings.Contains(got, "version 2 of 2") || !strings.Contains(got, "scribe") {
		t.Errorf("the plan's row: %q", got)
	}
	if p.eval(`document.querySelector('main tr[data-file="`+v1.ID+`"]') ? 'listed' : ''`) != "" {
		t.Error("an older version is listed as a file of its own")
	}
	p.shootBoth("files")

	// The plan: its latest version previewed, then the first one, exactly.
	p.click(`main tr[data-file="` + v2.ID + `"] td a`)
	p.poll("the plan's latest version", `(document.querySelector('main pre.file-preview') || {}).textContent === '# Plan\nthe second draft' && document.querySelectorAll('main table.versions tbody tr').length === 2`)
	if href := p.eval(`document.querySelector('main .buttons a.download').getAttribute('href')`); href != "/api/files/"+v2.ID+"/download" {
		t.Errorf("the download link: %q", href)
	}
	p.shootBoth("files-plan")
	p.click(`main table.versions tr[data-version="1"] a`)
	p.poll("the plan's first version", `(document.querySelector('main pre.file-preview') || {}).textContent === '# Plan\nthe first draft'`)

	// An agent's HTML is its text: nothing in it runs.
	p.goTo("#/files/" + page.ID)
	p.poll("the HTML file as text", `(document.querySelector('main pre.file-preview') || {}).textContent.includes('<script>window.pwned = 1</script>')`)
	if got := p.eval(`String(window.pwned || 'never ran')`); got != "never ran" {
		t.Errorf("the agent's HTML ran on the dashboard: window.pwned = %s", got)
	}

	// A screenshot is drawn.
	p.goTo("#/files/" + shot.ID)
	p.poll("the screenshot", `(() => { const i = document.querySelector('main img.file-preview'); return !!i && i.complete && i.naturalWidth === 40 })()`)
	p.shootBoth("files-image")
}
