package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

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
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// The dashboard in a real browser: send a message to an agent on the scripted model, see the
// reply stream in, approve the card in place, see the result; then a screenshot at phone
// width, kept as a test artifact.
func TestDashboardChatInBrowser(t *testing.T) {
	model, s, vars := scriptedServe(t)
	dir := t.TempDir()
	model.Script(
		pt.Reply{Text: []string{"Let me ", "set that up."}, InputTokens: 10, OutputTokens: 5,
			ToolCalls: []pt.ToolCall{{ID: "toolu_1", Name: provider.WireToolName("developer.workspace"), Args: `{"directory":"` + dir + `"}`}}},
		pt.Text("Your workspace ", "is ready."),
	)
	ctx := browser(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", s.port)
	type css = chromedp.CSS
	threadHas := func(text string) chromedp.Action[bool] {
		return chromedp.Poll[bool](fmt.Sprintf(`(document.querySelector('#thread')||{innerText:''}).innerText.includes(%q)`, text), chromedp.WithPollingTimeout(time.Minute))
	}
	// Loopback is no credential: before signing in, the browser gets the sign-in page.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	if page, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`)); err != nil || !strings.Contains(page, "Sign in to buddi") {
		t.Fatalf("before signing in the page shows (%v):\n%s", err, page)
	}
	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	steps := []struct {
		name string
		do   chromedp.Action[chromedp.Void]
	}{
		{"sign in", chromedp.Navigate(link.URL)},
		{"open the chat", chromedp.Navigate(base + "/#/chat/developer")},
		{"see the composer", chromedp.WaitVisible(css(`form.compose textarea`))},
		{"type", typeInto(css(`form.compose textarea`), "work in my project")},
		{"send", chromedp.Click(css(`form.compose button[type=submit]`))},
		{"see the card", chromedp.WaitVisible(css(`#thread .approval button.primary`))},
	}
	for _, st := range steps {
		if err := chromedp.Do(ctx, st.do); err != nil {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: %v\npage:\n%s\nserve log:\n%s", st.name, err, page, s.log.String())
		}
	}
	if _, err := chromedp.Run(ctx, threadHas("Let me set that up.")); err != nil {
		t.Fatalf("the streamed reply: %v", err)
	}
	// The rail counts the approval waiting for the owner.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('#rail .count')].map(e => e.textContent).join() === '1'`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		rail, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#rail').innerHTML`))
		t.Fatalf("the rail's count: %v\n%s", err, rail)
	}
	// Home shows the same card, drawn (not "[object HTMLDivElement]"), with its buttons.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash = '#/home'`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.querySelector('#thread') && !!document.querySelector('main .approval button.primary')`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
		t.Fatalf("Home does not show the waiting card (%v):\n%s", err, page)
	}
	if page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`)); strings.Contains(page, "[object") || strings.Contains(page, "null") {
		t.Errorf("Home prints what it should draw:\n%s", page)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash = '#/chat/developer'`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(css(`#thread .approval button.primary`))); err != nil {
		t.Fatal(err)
	}
	reply, err := chromedp.Run(ctx, chromedp.Text(css(`#thread`)))
	if err != nil || !strings.Contains(reply, "developer.workspace") {
		t.Fatalf("before the card, the thread shows (%v):\n%s", err, reply)
	}
	if err := chromedp.Do(ctx, chromedp.Click(css(`#thread .approval button.primary`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, threadHas("Your workspace is ready.")); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Text(css(`#thread`)))
		t.Fatalf("after approving: %v\n%s\nserve log:\n%s", err, text, s.log.String())
	}
	// Home shows nothing waiting any more.
	// (In-page routes change the hash: a Navigate would wait for a load that never comes.)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash = '#/home'`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('main').innerText.includes('No approvals are waiting.')`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("home: %v", err)
	}
	// A screenshot of the chat at phone width.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash = '#/chat/developer'`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, threadHas("Your workspace is ready.")); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + '\n' + document.body.innerText`))
		t.Fatalf("the chat again: %v\n%s", err, page)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 1000 {
		t.Fatalf("a screenshot of %d bytes", len(png))
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "dashboard-phone.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// Settings → Developer: the Tailscale switch, off by default, says what it exposes and that
	// this buddi runs without the tailnet; turning it on is saved.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash = '#/settings'`)); err != nil {
		t.Fatal(err)
	}
	toggle := css(`input[aria-label="Tailscale port per process"]`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(toggle)); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the Tailscale switch: %v\n%s", err, page)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
	if err != nil || !strings.Contains(page, "to your tailnet login and no one else's") || !strings.Contains(page, "runs without the tailnet") {
		t.Fatalf("Settings → Developer does not say what the switch exposes (%v):\n%s", err, page)
	}
	if on, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('input[aria-label="Tailscale port per process"]').checked`)); err != nil || on {
		t.Fatalf("the switch starts on (%v)", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(toggle)); err != nil {
		t.Fatal(err)
	}
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
