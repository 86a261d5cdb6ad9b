package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// page is a dashboard open in Chromium with the steps the browser tests take on it. Each step
// fails the test with the page's text (and serve's log, when it has one) in the message.
type page struct {
	t   *testing.T
	ctx context.Context
	s   *served // may be nil
}

// openPage starts Chromium (browser) for the dashboard s serves.
func openPage(t *testing.T, s *served) *page {
	t.Helper()
	return &page{t: t, ctx: browser(t), s: s}
}

// text is what the page shows, for failure messages.
func (p *page) text() string {
	out, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`location.hash + '\n' + document.body.innerText`))
	if p.s != nil {
		out += "\nserve log:\n" + p.s.log.String()
	}
	return out
}

// eval runs js and returns its string value.
func (p *page) eval(js string) string {
	p.t.Helper()
	out, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return out
}

// poll waits (45 s at most) until js is true.
func (p *page) poll(what, js string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(45*time.Second))); err != nil {
		p.t.Fatalf("%s: %v\npage:\n%s", what, err, p.text())
	}
}

// click clicks the first element sel matches.
//
// The element is found and clicked in one turn of the page (waiting, 45 s at most, until
// there is one): a live redraw between finding a node and clicking it would leave the click
// on a node that is gone.
func (p *page) click(sel string) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true })()`, sel)
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(45*time.Second))); err != nil {
		p.t.Fatalf("click %s: %v\npage:\n%s", sel, err, p.text())
	}
}

// set puts value in the form field sel, as typing would, and says the field changed.
func (p *page) set(sel, value string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`, sel, value))
}

// typeInto types text into the field sel, key by key, once it is visible (typeInto's retry
// covers a field the page draws again in between).
func (p *page) typeInto(sel, text string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, typeInto(chromedp.CSS(sel), text)); err != nil {
		p.t.Fatalf("type into %s: %v\npage:\n%s", sel, err, p.text())
	}
}

// navigate opens url (the dashboard's sign-in link or address).
func (p *page) navigate(url string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Navigate(url)); err != nil {
		p.t.Fatalf("open %s: %v", url, err)
	}
}

// goTo moves the page to hash ("#/missions").
func (p *page) goTo(hash string) { p.t.Helper(); p.eval(`location.hash = '` + hash + `'; ''`) }

// width sets the window's width to w px.
func (p *page) width(w int64) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(w, 900)); err != nil {
		p.t.Fatal(err)
	}
}

// shoot keeps a screenshot of the page at w px in the test's artifact directory, and checks
// nothing runs off its side and nothing is printed that should have been drawn.
func (p *page) shoot(name string, w int64) {
	p.t.Helper()
	p.width(w)
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](fmt.Sprintf(`document.documentElement.scrollWidth <= %d`, w), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		wide, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > %d).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('\n')`, w)))
		p.t.Fatalf("%s runs off a page %d px wide: %v\n%s", name, w, err, wide)
	}
	if text := p.eval(`document.querySelector('main').innerText`); strings.Contains(text, "[object") || strings.Contains(text, "null") || strings.Contains(text, "undefined") || strings.Contains(text, "NaN") {
		p.t.Errorf("%s prints what it should draw:\n%s", name, text)
	}
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil || len(png) < 1000 {
		p.t.Fatalf("screenshot %s: %d bytes, %v", name, len(png), err)
	}
	if err := os.WriteFile(filepath.Join(p.t.ArtifactDir(), fmt.Sprintf("%s-%d.png", name, w)), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// shootBoth keeps name at 1280 and 390 px, and leaves the window at 1280.
func (p *page) shootBoth(name string) {
	p.t.Helper()
	p.shoot(name, 1280)
	p.shoot(name, 390)
	p.width(1280)
}
