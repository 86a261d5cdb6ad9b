package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// A page asked for while an earlier one was still loading is never covered by it: the
// dashboard opens on Home, one of Home's first reads is held in the page (the rail's, or the
// first-run check's), the owner moves to a chat meanwhile, and when the held read is answered
// the earlier drawing stops there. Without the guard, Home's drawing went on after the held
// read with the newer page's generation and painted Home over the chat (the compose form
// gone under the owner's hands).
func TestStaleDrawingNeverCoversANewerPage(t *testing.T) {
	_, s, vars := scriptedServe(t)
	for _, held := range []string{"/api/attention", "/api/accounts"} {
		t.Run(strings.TrimPrefix(held, "/api/"), func(t *testing.T) {
			p := openPage(t, s)
			// The spy holds the first answer to held until the test lets it go, records every
			// read the page asks for, and says when the held answer's body has been read and
			// the work it started has run (a task after the body's promise resolved: the
			// drawings' awaits in between are microtasks, so they have all run by then).
			spy := fmt.Sprintf(`(() => {
				const real = window.fetch.bind(window);
				let release; const gate = new Promise(r => release = r);
				window.__release = () => release();
				window.__asked = []; window.__settled = false; let holding = true;
				window.fetch = async (url, opts) => {
					window.__asked.push(String(url));
					const res = await real(url, opts);
					if (String(url) !== %q || !holding) return res;
					holding = false;
					await gate;
					const json = res.json.bind(res);
					res.json = async () => { try { return await json(); } finally { setTimeout(() => { window.__settled = true; }, 0); } };
					return res;
				};
			})()`, held)
			if _, err := chromedp.Run(p.ctx, func(ctx context.Context, tg *chromedp.Target) (cdppage.AddScriptToEvaluateOnNewDocumentResult, error) {
				return cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: spy})
			}); err != nil {
				t.Fatal(err)
			}
			p.signIn(vars)
			p.poll("the held read", fmt.Sprintf(`window.__asked.includes(%q)`, held))
			p.goTo("#/chat/developer")
			p.poll("the chat", `!!document.querySelector('form.compose textarea')`)
			before := p.eval(`String(window.__asked.length)`)
			p.eval(`window.__release(); ''`)
			p.poll("the held read's end", `window.__settled === true`)
			asked := p.eval(fmt.Sprintf(`window.__asked.slice(%s).join(' ')`, before))
			for _, home := range []string{"/api/agents/settings", "/api/accounts", "/api/approvals", "/api/questions", "/api/jobs", "/api/notifications"} {
				if strings.Contains(asked, home) {
					t.Fatalf("after the owner moved to the chat, Home's drawing went on and read %s", asked)
				}
			}
			if got := p.eval(`location.hash + ' ' + !!document.querySelector('form.compose textarea') + ' ' + document.querySelector('main').innerText.includes('Needs you')`); got != "#/chat/developer true false" {
				t.Fatalf("the page is %q, want the chat", got)
			}
		})
	}
}
