package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
)

// browser starts headless Chromium (Debian's; .ci/run installs it) and returns a context
// driving one tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the dashboard tests need Chromium: install Debian's chromium package (.ci/run does)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil { // starts the browser
		t.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute) // the whole test's browser work, on a loaded machine too
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// The dashboard in a real browser: send a message to an agent on the scripted model, see the
// reply stream in, reload and see the card once, see the card and a failed job drawn on Home,
// approve the card in place, see the result rendered from Markdown, dismiss the failed job
// from Home, read Activity as a timeline; Home, Chat and Activity at 1280 and 390 px wide,
// with screenshots kept in the test's artifact directory.
func TestDashboardChatInBrowser(t *testing.T) {
	model, s, vars := scriptedServe(t)
	dir := t.TempDir()
	model.Script(
		pt.Reply{Text: []string{"Let me ", "set that up."}, InputTokens: 10, OutputTokens: 5,
			ToolCalls: []pt.ToolCall{{ID: "toolu_1", Name: provider.WireToolName("developer.workspace"), Args: `{"directory":"` + dir + `"}`}}},
		pt.Text("Your workspace ", "is **ready**:\n\n- `src`\n- [docs](javascript:alert(1))\n\n<img src=x onerror=alert(1)>"),
	)
	p := openPage(t, s)
	base := fmt.Sprintf("http://127.0.0.1:%d", s.port)
	// Loopback is no credential: before signing in, the browser gets the sign-in page.
	p.navigate(base + "/")
	if page := p.eval(`document.body.innerText`); !strings.Contains(page, "Sign in to buddi") {
		t.Fatalf("before signing in the page shows:\n%s", page)
	}
	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p.width(1280)
	p.navigate(link.URL)
	p.navigate(base + "/#/chat/developer")
	p.typeInto(`form.compose textarea`, "work in my project")
	p.click(`form.compose button[type=submit]`)
	p.poll("the card", `!!document.querySelector('#thread .approval button.primary')`)
	p.poll("the streamed reply", `(document.querySelector('#thread')||{innerText:''}).innerText.includes('Let me set that up.')`)
	checkRenderHelper(t, p.ctx)

	// A reload draws the card once: the transcript, the waiting approvals and the live
	// stream's replay all bring it, keyed by its action.
	if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	p.poll("the replayed card after a reload", `(document.querySelector('#thread')||{dataset:{}}).dataset.live?.includes('approval')`)
	if n := p.eval(`String(document.querySelectorAll('#thread [data-action]').length) + ' ' + String(document.querySelector('#thread').innerText.split('Let me set that up.').length - 1)`); n != "1 1" {
		t.Fatalf("after a reload, the cards and the streamed reply are drawn %s times:\n%s", n, p.eval(`document.querySelector('#thread').innerText`))
	}

	// A failed job, as the queue leaves one that used up its attempts.
	dbctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(dbctx, appDSN(t, s.home))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(dbctx, `INSERT INTO river.river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, finalized_at, errors)
		VALUES ('{}', 'mail.triage', 8, 'default', 'discarded', 8, now(), now(),
		        ARRAY['{"at":"2026-11-29T00:00:00Z","attempt":8,"error":"connection reset by peer"}'::jsonb])`); err != nil {
		t.Fatal(err)
	}

	// The rail counts the approval waiting for the owner.
	p.poll("the rail's count", `[...document.querySelectorAll('#rail .count')].map(e => e.textContent).join() === '1'`)
	p.shoot("chat-card", 1280)
	// Home draws the same card and the failed job (not "[object HTMLDivElement]"), with their
	// buttons.
	p.goTo("#/home")
	p.poll("Home shows the waiting card and the failed job", `!document.querySelector('#thread') && !!document.querySelector('main .approval button.primary') && document.querySelector('main').innerText.includes('connection reset by peer') && !!document.querySelector('main .job button')`)
	p.shootBoth("home")

	p.goTo("#/chat/developer")
	p.poll("the card in the chat", `!!document.querySelector('#thread .approval button.primary')`)
	if reply := p.eval(`document.querySelector('#thread').innerText`); !strings.Contains(reply, "developer.workspace") {
		t.Fatalf("before the card, the thread shows:\n%s", reply)
	}
	p.click(`#thread .approval button.primary`)
	// The answer is drawn from its Markdown, rendered and sanitised on the server.
	p.poll("the answer, rendered", `!!document.querySelector('#thread .msg.assistant strong') && document.querySelector('#thread').innerText.includes('Your workspace is ready')`)
	if got := p.eval(`document.querySelector('#thread').innerText`); strings.Contains(got, "**") || strings.Contains(got, "[docs]") {
		t.Errorf("the answer shows its Markdown:\n%s", got)
	}
	if bad := p.eval(`[...document.querySelectorAll('#thread a, #thread img, #thread [onerror]')].map(e => e.outerHTML).filter(h => /javascript:|onerror|<img/i.test(h)).join()`); bad != "" {
		t.Errorf("the answer keeps what it should not: %s", bad)
	}
	p.shootBoth("chat")

	// Home shows nothing waiting any more; the failed job is dismissed from there.
	// (In-page routes change the hash: a Navigate would wait for a load that never comes.)
	p.goTo("#/home")
	p.poll("Home without the card", `document.querySelector('main').innerText.includes('No approvals are waiting.') && !!document.querySelector('main .job button.dismiss')`)
	p.click(`main .job button.dismiss`)
	p.poll("Home after dismissing", `document.querySelector('main').innerText.includes('No failed jobs.')`)

	// A mission's report arrives while Home is open (the row and event notifyOwner writes):
	// it is drawn under What arrived without a reload, and marked seen.
	if _, err := conn.Exec(dbctx, `WITH n AS (INSERT INTO core.owner_notifications (key, kind, urgency, title, body, routes)
		VALUES ('mission.report:browser', 'mission.reported', 'normal', 'A report from developer', 'The nightly build is green.', '{dashboard}') RETURNING id)
		INSERT INTO core.events (kind, payload) SELECT 'owner.notified', jsonb_build_object('id', id, 'kind', 'mission.reported', 'urgency', 'normal', 'routes', ARRAY['dashboard']) FROM n`); err != nil {
		t.Fatal(err)
	}
	p.poll("the report on Home", `!!document.querySelector('main .notice') && document.querySelector('main').innerText.includes('The nightly build is green.')`)
	waitFor(t, "the report marked seen", 30*time.Second, func() bool {
		var seen bool
		return conn.QueryRow(dbctx, `SELECT seen_at IS NOT NULL FROM core.owner_notifications WHERE key = 'mission.report:browser'`).Scan(&seen) == nil && seen
	})

	// Activity is a timeline in words, one line per event, that fits a phone.
	p.goTo("#/activity")
	p.poll("Activity's timeline", `document.querySelectorAll('main .timeline li').length > 3 && document.querySelector('main .timeline').innerText.includes('you approved')`)
	if got := p.eval(`document.querySelector('main .timeline').innerText`); strings.Contains(got, `{"`) || strings.Contains(got, `"run_id"`) {
		t.Errorf("Activity shows raw JSON:\n%s", got)
	}
	p.shootBoth("activity")

	// Settings → Developer: the Tailscale switch, off by default, says what it exposes and that
	// this buddi runs without the tailnet; turning it on is saved.
	p.goTo("#/settings")
	toggle := `input[aria-label="Tailscale port per process"]`
	p.poll("the Tailscale switch", `!!document.querySelector('`+toggle+`')`)
	if page := p.eval(`document.querySelector('main').innerText`); !strings.Contains(page, "to your tailnet login and no one else's") || !strings.Contains(page, "runs without the tailnet") {
		t.Fatalf("Settings → Developer does not say what the switch exposes:\n%s", page)
	}
	if on := p.eval(`String(document.querySelector('` + toggle + `').checked)`); on != "false" {
		t.Fatalf("the switch starts %s", on)
	}
	p.click(toggle)
	waitFor(t, "the switch to be saved", 30*time.Second, func() bool {
		var dev struct{ Tailnet struct{ Previews bool } }
		s.getJSON(t, "/api/developer", &dev)
		return dev.Tailnet.Previews
	})
}

// A preview in a real browser: the agent starts a dev server (a page whose script talks over a
// websocket) in its workspace, the owner opens the preview through its link, and the page and
// a websocket message that came through the proxy are seen.
func TestPreviewInBrowser(t *testing.T) {
	model, s, vars, _ := scriptedServeAt(t)
	startDevServer(t, model, vars)
	var link struct{ URL string }
	s.getJSON(t, "/api/preview/developer/web/link", &link)
	if !strings.Contains(link.URL, "/preview/developer/web/?ticket=") || strings.Contains(link.URL, fmt.Sprintf(":%d/", s.port)) {
		t.Fatalf("link %q: want the preview origin, never the dashboard's", link.URL)
	}
	ctx := browser(t)
	// The link redeems the ticket and redirects to the clean path, where the page loads.
	if err := chromedp.Do(ctx, chromedp.Navigate(link.URL), chromedp.WaitVisible(chromedp.CSS(`#ws`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(document.getElementById('ws')||{}).textContent === 'pong to ping via websocket'`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + '\n' + document.body.innerText`))
		t.Fatalf("the preview: %v\n%s\nserve log:\n%s", err, page, s.log.String())
	}
	href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if strings.Contains(href, "ticket=") {
		t.Fatalf("the ticket stayed in the address: %s", href)
	}
	var check struct {
		OK             bool
		AbsoluteAssets bool `json:"absoluteAssets"`
	}
	s.getJSON(t, "/api/preview/developer/web/check", &check)
	if !check.OK || check.AbsoluteAssets {
		t.Fatalf("check: %+v", check)
	}
}

// getJSON reads path from the served dashboard with the command line's token into v.
func (s *served) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := s.get(path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", path, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// startDevServer has the agent start internal/devserver as process "web" in a new workspace
// (the scripted model calls developer.start; the card is approved), waits until it listens
// and returns its port.
func startDevServer(t *testing.T, model *pt.Server, vars []string) int {
	t.Helper()
	ws, bin := t.TempDir(), t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "buddi-devserver"), "buddi/internal/devserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the dev server: %v\n%s", err, out)
	}
	// The workspace keeps the PATH it is set with: the dev server is a program on it.
	withBin := append([]string(nil), vars...)
	for i, kv := range withBin {
		if strings.HasPrefix(kv, "PATH=") {
			withBin[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	if code, out, errOut := runBuddi(t, withBin, time.Minute, "developer", "workspace", "set", ws); code != 0 {
		t.Fatalf("workspace set: %d %s%s", code, out, errOut)
	}
	port := freeTestPort(t)
	model.Script(
		pt.Tools(pt.ToolCall{ID: "toolu_s", Name: provider.WireToolName("developer.start"),
			Args: fmt.Sprintf(`{"name":"web","command":"buddi-devserver %d","port":%d}`, port, port)}),
		pt.Text("It is running."),
	)
	code, out, errOut := runWithInput(t, vars, "a\n", "ask", "--agent", "@dev", "start the dev server")
	if code != 0 || !strings.Contains(errOut, "✓ developer.start") {
		t.Fatalf("the dev server did not start: %d\n%s\n%s", code, out, errOut)
	}
	waitFor(t, "the dev server to listen", time.Minute, func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return port
}

// typeInto types text into the element sel finds. The page draws the chat again when its data
// arrives (the draft is kept), which can replace the element between finding it and typing:
// then it finds the new one and types there. A replaced element took no keys (the focus on it
// fails first), so nothing is typed twice.
func typeInto(sel chromedp.CSS, text string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range 5 {
			if err = chromedp.Do(ctx, chromedp.WaitVisible(sel)); err != nil {
				return chromedp.Void{}, err
			}
			if err = chromedp.Do(ctx, chromedp.SendKeys(sel, text)); err == nil || !strings.Contains(err.Error(), "Could not find node") {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, err
	}
}

// checkRenderHelper runs web/dom.js's helper in the page: lists are drawn as their items,
// absent parts as nothing, strings as text (never markup), the server's sanitised HTML as
// HTML, and a value that is neither a node nor text is refused instead of printed.
func checkRenderHelper(t *testing.T, ctx context.Context) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`import('/dom.js').then(({h, words, sanitised, fill}) => {
		const out = {};
		out.flat = h('div', {class: ['a', null, '', 'b'], title: null, hidden: false, 'data-x': 0},
			['x', null, [h('span', {}, 1), undefined, false], 0], '<b>t</b>').outerHTML;
		out.words = words(' · ', null, 'agent', undefined, ['', 'tool'], false);
		out.sanitised = h('div', {}, sanitised('<p><strong>x</strong></p>')).innerHTML;
		const box = h('div', {}, 'old');
		fill(box, [h('i', {}, 'a'), null], [[h('i', {}, 'b')]], null);
		out.fill = box.innerHTML;
		const refuse = f => { try { f(); return 'drawn'; } catch (e) { return e instanceof TypeError ? 'refused' : String(e); } };
		out.object = refuse(() => h('div', {}, {a: 1}));
		out.promise = refuse(() => fill(box, Promise.resolve(1)));
		out.attr = refuse(() => h('div', {title: {}}));
		out.handler = refuse(() => h('button', {onclick: 'alert(1)'}));
		out.wordsObject = refuse(() => words(' ', {}));
		return out;
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the render helper: %v", err)
	}
	want := map[string]string{
		"flat":      `<div class="a b" data-x="0">x<span>1</span>0&lt;b&gt;t&lt;/b&gt;</div>`,
		"words":     "agent · tool",
		"sanitised": "<p><strong>x</strong></p>",
		"fill":      "<i>a</i><i>b</i>",
		"object":    "refused", "promise": "refused", "attr": "refused", "handler": "refused", "wordsObject": "refused",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("render helper %s = %q, want %q", k, got[k], w)
		}
	}
}
