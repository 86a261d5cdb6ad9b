package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// The canvas in a real browser, through a real buddi serve and the scripted model: an agent
// granted canvas.show draws a table (holding a stored secret, which the canvas shows as its
// redaction mark) and a diff; the panel sits beside the chat at 1280 px and below it at
// 390 px, each tab drawn with the generic renderers (headers from the rows' keys, the diff's
// lines marked added and removed), nothing running off the page; the views come both from
// the live stream and, after the turn, from the transcript.
func TestCanvasInBrowser(t *testing.T) {
	model, s, vars, _ := scriptedServeWith(t, nil, func(vars []string) {
		home := ""
		for _, kv := range vars {
			if v, ok := strings.CutPrefix(kv, "BUDDI_HOME="); ok {
				home = v
			}
		}
		dir := filepath.Join(home, "agents")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		agent := "---\nid: painter\nhandle: \"@painter\"\nname: Painter\ntools: [canvas.show]\n---\nYou draw what the owner asks for.\n"
		if err := os.WriteFile(filepath.Join(dir, "painter.md"), []byte(agent), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runBuddi(t, vars, time.Minute, "agents", "set", "@painter", "--account", "scripted", "--model", "model-one"); code != 0 {
			t.Fatalf("agents set: %d %s%s", code, out, errOut)
		}
	})
	rows := `[{"service":"api","region":"eu-west-1","requests":1200,"p95_ms":41.50,"key":"` + pt.APIKey + `"},` +
		`{"service":"worker","region":"us-east-2","requests":87,"p95_ms":230,"key":"none"},` +
		`{"service":"scheduler","region":"eu-west-1","requests":3,"p95_ms":12,"key":"none"}]`
	diff := "--- a/config.yaml\\n+++ b/config.yaml\\n@@ -1,3 +1,3 @@\\n replicas: 2\\n-timeout: 30s\\n+timeout: 45s\\n retries: 3"
	model.Script(
		pt.Reply{Text: []string{"Drawing."}, ToolCalls: []pt.ToolCall{
			{ID: "toolu_t", Name: provider.WireToolName("canvas.show"), Args: `{"renderer":"table","title":"Services","columns":["service","region","requests","p95_ms","key"],"data":` + rows + `}`},
			{ID: "toolu_d", Name: provider.WireToolName("canvas.show"), Args: `{"renderer":"diff","title":"The change","data":"` + diff + `"}`},
		}},
		pt.Text("Both are on the canvas."),
	)
	p := openPage(t, s)
	p.signIn(vars)
	p.width(1280)
	p.goTo("#/chat/painter")
	p.typeInto(`form.compose textarea`, "show me the services and the change")
	p.click(`form.compose button[type=submit]`)
	p.poll("two tabs from the live stream", `document.querySelectorAll('.canvas .canvas-tab').length === 2`)
	p.poll("the turn's end", `(document.querySelector('#thread')||{innerText:''}).innerText.includes('Both are on the canvas.')`)
	// After the turn the chat is drawn again from the transcript: its views draw the same tabs.
	p.poll("two tabs from the transcript", `document.querySelectorAll('.canvas .canvas-tab').length === 2 && !!document.querySelector('.canvas-body[data-renderer=diff]')`)

	// The diff (the last result) is selected: its lines are marked.
	if got := p.eval(`[...document.querySelectorAll('.canvas-diff span')].map(e => e.className + ':' + e.textContent).join('|')`); got !=
		"diff-file:--- a/config.yaml|diff-file:+++ b/config.yaml|diff-hunk:@@ -1,3 +1,3 @@|diff-ctx: replicas: 2|diff-del:-timeout: 30s|diff-add:+timeout: 45s|diff-ctx: retries: 3" {
		t.Fatalf("the diff is drawn as %s", got)
	}
	p.shootCanvas("canvas-diff")

	p.click(`.canvas .canvas-tab[data-tab=toolu_t]`)
	p.poll("the table", `!!document.querySelector('.canvas table.canvas-table')`)
	if got := p.eval(`[...document.querySelectorAll('.canvas-table th')].map(e => e.textContent).join(',')`); got != "service,region,requests,p95_ms,key" {
		t.Fatalf("the table's headers are %s", got)
	}
	cells := p.eval(`[...document.querySelectorAll('.canvas-table tbody tr')].map(r => [...r.cells].map(c => c.textContent).join(' ')).join('\n')`)
	if strings.Contains(cells, pt.APIKey) || !strings.Contains(cells, "‹secret:MODEL_KEY›") {
		t.Fatalf("the canvas shows a stored secret, or no mark for it:\n%s", cells)
	}
	// Numbers are printed as written: 41.50, not 41.5.
	if !strings.Contains(cells, "api eu-west-1 1200 41.50") {
		t.Fatalf("the table's rows are\n%s", cells)
	}
	p.shootCanvas("canvas-table")
}

// signIn opens the dashboard through buddi dashboard's sign-in link.
func (p *page) signIn(vars []string) {
	p.t.Helper()
	var link struct{ URL string }
	if code, out, errOut := runBuddi(p.t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil || link.URL == "" {
		p.t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p.navigate(link.URL)
}

// shootCanvas keeps the chat with its canvas at 1280 and 390 px: the panel is visible at
// both, beside the chat's column at 1280 and below it at 390, and no part of it is wider
// than the page.
func (p *page) shootCanvas(name string) {
	p.t.Helper()
	for _, w := range []int64{1280, 390} {
		p.shoot(name, w)
		geo := p.eval(`(() => {
			const c = document.querySelector('.canvas').getBoundingClientRect(), t = document.querySelector('.chat-column').getBoundingClientRect();
			const wide = [...document.querySelectorAll('.canvas *')].filter(e => e.getBoundingClientRect().right > innerWidth + 0.5 && !e.closest('.scroll')).length;
			return [Math.round(c.width) > 150 && c.height > 50 ? 'visible' : 'hidden', c.left >= t.right - 1 ? 'beside' : c.top >= t.bottom - 1 ? 'below' : 'over', wide ? 'overflows' : 'fits'].join(' ');
		})()`)
		want := "visible beside fits"
		if w == 390 {
			want = "visible below fits"
		}
		if geo != want {
			p.t.Fatalf("%s at %d px: the canvas is %q, want %q", name, w, geo, want)
		}
	}
	p.width(1280)
}
