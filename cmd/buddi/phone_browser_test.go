package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"buddi/surfaces/telegram/telegramtest"
)

// Settings → Telegram and Settings → Tailnet in a real browser. With no bot the page says
// how to set one up and offers no pairing; after `buddi telegram setup` and a restart, Pair
// shows a QR code (drawn) and the t.me link; the phone sends /start with the link's code to
// the Bot API server of the tests, and the device appears on the page while it is open, and
// is unpaired from it. Tailnet: turned on for the next start, the owner's login set, the
// previews switch, as `buddi tailnet status` reads them. Each page at 1280 and 390 px.
func TestPhonePagesInBrowser(t *testing.T) {
	api := telegramtest.New(t)
	home, port, vars := env(t, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=", "BUDDI_TELEGRAM_API_URL="+api.URL)
	if code, out, errOut := runBuddi(t, vars, 2*time.Minute, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: %d %s%s", code, out, errOut)
	}
	s := startServe(t, home, port, vars)
	s.health()
	p := openPage(t, s)
	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p.width(1280)
	p.navigate(link.URL)
	p.poll("Home", `!!document.querySelector('main h2')`)

	// No bot: a sentence and the command, no pairing.
	p.goTo("#/settings/telegram")
	p.poll("Telegram with no bot", `(() => { const c = document.querySelector('main .card.bot'); return !!c && c.innerText.includes('No Telegram bot') && c.innerText.includes('buddi telegram setup') })()`)
	if p.eval(`document.querySelector('main button.pair') ? 'pair' : ''`) != "" {
		t.Fatal("a page with no bot offers pairing")
	}
	p.shootBoth("telegram-no-bot")

	// The bot is set up where buddi runs, and buddi restarted to connect it.
	if code, out, errOut := runWithInput(t, vars, telegramtest.Token+"\n", "telegram", "setup"); code != 0 {
		t.Fatalf("telegram setup: %d %s%s", code, out, errOut)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve stopped with %d\n%s", code, s.log.String())
	}
	s = startServe(t, home, port, vars)
	p.s = s
	s.health()
	p.goTo("#/home")
	p.poll("Home after the restart", `!!document.querySelector('main h2') && !location.hash.includes('telegram')`)
	p.goTo("#/settings/telegram")
	p.poll("the connected bot", `(() => { const c = document.querySelector('main .card.bot'); return !!c && c.innerText.includes('@test_buddi_bot') && c.querySelector('.pill').textContent === 'connected' })()`)

	// Pair: a QR code drawn from the server's SVG, and the link with a one-use code.
	p.click(`main button.pair`)
	p.poll("the pairing code", `(() => { const i = document.querySelector('main .pairing img.qr'); return !!i && i.complete && i.naturalWidth > 0 && !!document.querySelector('main .pairing a.link') })()`)
	href := p.eval(`document.querySelector('main .pairing a.link').href`)
	code, ok := strings.CutPrefix(href, "https://t.me/test_buddi_bot?start=")
	if !ok || len(code) != 8 {
		t.Fatalf("the pairing link: %q", href)
	}
	if got := p.eval(`document.querySelector('main .pairing code').textContent`); got != code {
		t.Fatalf("the page shows the code %q, the link carries %q", got, code)
	}
	if svg := p.eval(`decodeURIComponent(document.querySelector('main .pairing img.qr').src.split(',')[1])`); !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "<path") {
		t.Fatalf("the QR code is not the server's SVG: %.80s", svg)
	}
	p.shootBoth("telegram-pair")

	// The phone opens the link: Telegram sends /start CODE; the device shows on the open page.
	api.Push(map[string]any{"update_id": 1, "message": map[string]any{"message_id": 1,
		"from": map[string]any{"id": 42, "is_bot": false, "first_name": "Ann"}, "chat": map[string]any{"id": 4242, "type": "private"}, "text": "/start " + code}})
	p.poll("the paired phone", `(() => { const d = document.querySelector('main [data-device]'); return !!d && d.innerText.includes('Ann') && d.querySelector('.pill').textContent === 'paired' })()`)
	p.poll("the spent code put away", `!document.querySelector('main .pairing') && document.getElementById('status').textContent.includes('paired')`)
	p.shootBoth("telegram-devices")
	p.click(`main [data-device] button.unpair`)
	p.poll("the unpaired phone", `!document.querySelector('main [data-device]') && document.querySelector('main').innerText.includes('No phone is paired')`)
	if code, out, _ := runBuddi(t, vars, time.Minute, "telegram", "devices", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("devices after unpair: %d %s", code, out)
	}

	// Tailnet: off; turned on for the next start; the owner's login; previews.
	p.goTo("#/settings/tailnet")
	p.poll("the Tailnet page", `(() => { const m = document.querySelector('main'); return !!m.querySelector('.card.tailnet') && m.innerText.includes('off the tailnet') && m.innerText.includes('not running in this buddi') })()`)
	p.click(`main input.enabled`)
	p.poll("the tailnet on", `document.querySelector('main .card.tailnet .pill').textContent === 'on' && document.getElementById('status').textContent.includes('next start')`)
	p.poll("the owner asked for", `document.querySelector('main .problem').textContent.includes('No owner login')`)
	p.set(`main form[data-form=owner] [name=login]`, "ann@example.com")
	p.click(`main form[data-form=owner] button[type=submit]`)
	p.poll("the owner's login", `document.querySelector('main .owner-login').textContent === 'ann@example.com' && !document.querySelector('main .problem')`)
	p.click(`main input.previews`)
	p.poll("previews on", `document.querySelector('main .card.previews .pill').textContent === 'on'`)
	p.shootBoth("tailnet")
	var st struct {
		Enabled  bool
		Owner    string
		Previews bool
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "tailnet", "status", "--json"); code != 0 || json.Unmarshal([]byte(out), &st) != nil ||
		!st.Enabled || st.Owner != "ann@example.com" || !st.Previews {
		t.Fatalf("tailnet status after the page: %d %s%s", code, out, errOut)
	}
}
