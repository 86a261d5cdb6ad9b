package dashboard_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/health"
	"buddi/internal/pgtest"
	"buddi/migrations"
	"buddi/plugins/developer"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/telegram"
)

// phoneBundle is a dashboard with Settings → Telegram and Settings → Tailnet over the real
// stores, and a health report and an auth key the test sets.
type phoneBundle struct {
	ts   *httptest.Server
	pool *pgxpool.Pool
	tg   *telegram.Store
	dev  *developer.Store

	mu      sync.Mutex
	report  health.Report
	authKey string
	keyErr  error
}

func servePhone(t *testing.T) *phoneBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	m := developer.Manifest(developer.Deps{Pool: pool, Seal: key})
	if _, err := migrations.Up(context.Background(), pool, nil, migrations.Set{Schema: m.Schema, FS: m.Migrations}); err != nil {
		t.Fatal(err)
	}
	b := &phoneBundle{pool: pool, tg: &telegram.Store{Pool: pool, Key: key}, dev: developer.NewStore(pool, key, nil)}
	srv := dashboard.NewServer(dashboard.Deps{
		Health: func(context.Context) health.Report { b.mu.Lock(); defer b.mu.Unlock(); return b.report },
		Pool:   pool, Seal: key,
		Phone: &dashboard.Phone{Telegram: b.tg, Previews: b.dev, Hostname: "buddi-test",
			AuthKey: func() (string, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.authKey, b.keyErr }},
	})
	b.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(b.ts.Close)
	signIn(t, pool, key, b.ts.Listener.Addr().String())
	return b
}

// set changes what the health report and the auth key say.
func (b *phoneBundle) set(fn func()) { b.mu.Lock(); defer b.mu.Unlock(); fn() }

func (b *phoneBundle) get(t *testing.T, path string) map[string]any {
	t.Helper()
	code, out := do(t, "GET", b.ts.URL+path, nil, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, code, out)
	}
	return out
}

func (b *phoneBundle) post(t *testing.T, path, body string, want int) map[string]any {
	t.Helper()
	code, out := do(t, "POST", b.ts.URL+path, jsonType, body)
	if code != want {
		t.Fatalf("POST %s %s: %d, want %d: %v", path, body, code, want, out)
	}
	return out
}

// Settings → Telegram: with no bot, a sentence and no code; a bot record buddi did not seal
// gets no link; a set-up bot's state follows the health report; Pair makes a one-use code,
// its t.me link and the link's QR code; a phone paired with it is listed and can be unpaired;
// unpairing an unknown device is a 404.
func TestTelegramSettings(t *testing.T) {
	t.Parallel()
	b := servePhone(t)
	ctx := context.Background()

	v := b.get(t, "/api/telegram")
	if v["set_up"] != false || !strings.Contains(v["sentence"].(string), "No Telegram bot") || !strings.Contains(v["fix"].(string), "buddi telegram setup") {
		t.Fatalf("no bot: %v", v)
	}
	if devices := v["devices"].([]any); len(devices) != 0 {
		t.Fatalf("no bot, devices: %v", devices)
	}
	if out := b.post(t, "/api/telegram/pair", `{}`, http.StatusConflict); !strings.Contains(out["error"].(string), "buddi telegram setup") {
		t.Fatalf("pair with no bot: %v", out)
	}

	// A record someone wrote into the database: no link is made to it.
	if _, err := b.pool.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ('telegram_bot', '{"username":"evil_bot","id":1}')`); err != nil {
		t.Fatal(err)
	}
	v = b.get(t, "/api/telegram")
	if v["set_up"] != false || v["refused"] == nil || !strings.Contains(v["fix"].(string), "buddi telegram setup") {
		t.Fatalf("a forged bot record: %v", v)
	}
	if out := b.post(t, "/api/telegram/pair", `{}`, http.StatusConflict); strings.Contains(fmt.Sprint(out), "t.me") {
		t.Fatalf("pair with a forged bot record: %v", out)
	}

	if err := b.tg.SetBot(ctx, "test_buddi_bot", 7); err != nil {
		t.Fatal(err)
	}
	v = b.get(t, "/api/telegram")
	if v["set_up"] != true || v["bot"] != "test_buddi_bot" || v["connected"] != false || !strings.Contains(v["fix"].(string), "Restart buddi serve") {
		t.Fatalf("a bot this buddi did not start with: %v", v)
	}
	b.set(func() { b.report.Telegram = &health.Telegram{SinceLastPollSeconds: 125} })
	if v = b.get(t, "/api/telegram"); v["connected"] != true || v["sentence"] != "The bot @test_buddi_bot last heard from Telegram 2 min ago." || v["fix"] != nil {
		t.Fatalf("a polling bot: %v", v)
	}
	b.set(func() { b.report.Telegram = &health.Telegram{Down: true, SinceLastPollSeconds: -1} })
	if v = b.get(t, "/api/telegram"); v["down"] != true || !strings.Contains(v["sentence"].(string), "refused") || !strings.Contains(v["fix"].(string), "buddi telegram setup") {
		t.Fatalf("a refused token: %v", v)
	}

	before := time.Now()
	out := b.post(t, "/api/telegram/pair", `{}`, http.StatusCreated)
	code := out["code"].(string)
	link := out["link"].(string)
	if len(code) != 8 || link != "https://t.me/test_buddi_bot?start="+code {
		t.Fatalf("pair: %v", out)
	}
	expires, err := time.Parse(time.RFC3339Nano, out["expires_at"].(string))
	if err != nil || expires.Before(before.Add(telegram.PairingTTL-time.Minute)) || expires.After(time.Now().Add(telegram.PairingTTL)) {
		t.Fatalf("expires_at %v (%v)", out["expires_at"], err)
	}
	if got, err := decodeQRSVG(out["qr_svg"].(string)); err != nil || got != link {
		t.Fatalf("the QR code reads %q (%v), want %q", got, err, link)
	}
	if strings.Contains(fmt.Sprint(b.get(t, "/api/telegram")), code) {
		t.Fatal("the page's state carries the code")
	}

	// The phone sends /start CODE: it is paired, once.
	if err := b.tg.Pair(ctx, code, telegram.User{ID: 42, FirstName: "Ann"}, 4242); err != nil {
		t.Fatal(err)
	}
	if err := b.tg.Pair(ctx, code, telegram.User{ID: 43, FirstName: "Bob"}, 4343); !errors.Is(err, telegram.ErrBadCode) {
		t.Fatalf("the code worked twice: %v", err)
	}
	devices := b.get(t, "/api/telegram")["devices"].([]any)
	if len(devices) != 1 {
		t.Fatalf("devices: %v", devices)
	}
	ann := devices[0].(map[string]any)
	if ann["name"] != "Ann" || ann["chat_id"] != float64(4242) || ann["sealed"] != true {
		t.Fatalf("the paired phone: %v", ann)
	}
	id := int64(ann["id"].(float64))

	b.post(t, "/api/telegram/devices/999/unpair", `{}`, http.StatusNotFound)
	b.post(t, "/api/telegram/devices/ann/unpair", `{}`, http.StatusNotFound)
	b.post(t, fmt.Sprintf("/api/telegram/devices/%d/unpair", id), `{}`, http.StatusOK)
	if paired, err := b.tg.Paired(ctx, 42, 4242); err != nil || paired {
		t.Fatalf("after unpair, paired %v (%v)", paired, err)
	}
	if devices := b.get(t, "/api/telegram")["devices"].([]any); len(devices) != 0 {
		t.Fatalf("after unpair: %v", devices)
	}
	b.post(t, fmt.Sprintf("/api/telegram/devices/%d/unpair", id), `{}`, http.StatusNotFound)
}

// Settings → Tailnet: the saved switch, the owner's login (a forged one is nobody's), the
// previews switch, where the auth key is kept (never its value) and the running node.
func TestTailnetSettings(t *testing.T) {
	t.Parallel()
	b := servePhone(t)
	ctx := context.Background()

	v := b.get(t, "/api/tailnet")
	if v["enabled"] != false || v["running"] != false || v["owner"] != "" || v["previews"] != false || v["auth_key"] != "" ||
		v["hostname"] != "buddi-test" || v["problem"] != nil || !strings.Contains(v["sentence"].(string), "off the tailnet") {
		t.Fatalf("a new buddi: %v", v)
	}

	b.post(t, "/api/tailnet/enabled", `{}`, http.StatusBadRequest)
	out := b.post(t, "/api/tailnet/enabled", `{"on": true}`, http.StatusOK)
	if !strings.Contains(out["sentence"].(string), "next start") || !strings.Contains(out["sentence"].(string), "login") {
		t.Fatalf("on with no owner: %v", out)
	}
	v = b.get(t, "/api/tailnet")
	if v["enabled"] != true || !strings.Contains(v["sentence"].(string), "next start") || !strings.Contains(v["problem"].(string), "No owner login") {
		t.Fatalf("on, no owner: %v", v)
	}

	if out := b.post(t, "/api/tailnet/owner", `{"login": "not a login"}`, http.StatusBadRequest); !strings.Contains(out["error"].(string), "not a tailnet login") {
		t.Fatalf("a bad login: %v", out)
	}
	b.post(t, "/api/tailnet/owner", `{"login": "ann@example.com"}`, http.StatusOK)
	if v = b.get(t, "/api/tailnet"); v["owner"] != "ann@example.com" || v["problem"] != nil {
		t.Fatalf("with an owner: %v", v)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE core.system_flags SET value = '{"login":"mallory@example.com","how":"command"}' WHERE key = 'tailnet_owner'`); err != nil {
		t.Fatal(err)
	}
	if v = b.get(t, "/api/tailnet"); v["owner"] != "" || v["refused"] != "mallory@example.com" || !strings.Contains(v["problem"].(string), "no seal") {
		t.Fatalf("a forged owner: %v", v)
	}
	b.post(t, "/api/tailnet/owner", `{"login": "ann@example.com"}`, http.StatusOK)

	b.post(t, "/api/tailnet/previews", `{"on": true}`, http.StatusOK)
	if on, err := b.dev.TailnetPreviews(ctx); err != nil || !on {
		t.Fatalf("previews after on: %v %v", on, err)
	}
	if v = b.get(t, "/api/tailnet"); v["previews"] != true {
		t.Fatalf("previews on: %v", v)
	}

	b.set(func() {
		b.authKey = "the vault"
		b.report.Tailnet = &health.Tailnet{State: "running", Hostname: "buddi-test", DNSName: "buddi-test.example.ts.net", IPs: []string{"100.64.0.7"}}
	})
	v = b.get(t, "/api/tailnet")
	node, _ := v["node"].(map[string]any)
	if v["auth_key"] != "the vault" || v["running"] != true || v["sentence"] != "buddi is on your tailnet." || node["ips"] == nil || v["problem"] != nil {
		t.Fatalf("a running node: %v", v)
	}
	b.post(t, "/api/tailnet/enabled", `{"on": false}`, http.StatusOK)
	if v = b.get(t, "/api/tailnet"); !strings.Contains(v["sentence"].(string), "next start is without it") {
		t.Fatalf("off while running: %v", v)
	}
	b.set(func() { b.keyErr = errors.New("the vault is locked") })
	if v = b.get(t, "/api/tailnet"); !strings.Contains(v["problem"].(string), "cannot tell whether an auth key is stored") {
		t.Fatalf("a locked vault: %v", v)
	}
}

// Every Telegram and Tailnet write checks the CSRF token like the others.
func TestPhoneWritesCheckCSRF(t *testing.T) {
	t.Parallel()
	b := servePhone(t)
	for _, path := range []string{"/api/telegram/pair", "/api/telegram/devices/1/unpair", "/api/tailnet/enabled", "/api/tailnet/previews", "/api/tailnet/owner"} {
		if code, _ := do(t, "POST", b.ts.URL+path, map[string]string{dashboard.CSRFHeader: "", "Content-Type": "application/json"}, `{"on": true}`); code != http.StatusForbidden {
			t.Errorf("POST %s without the CSRF header: %d", path, code)
		}
	}
	if on, _ := b.dev.TailnetPreviews(context.Background()); on {
		t.Error("a refused write turned the previews on")
	}
}

// The QR code reads back as what it encodes, for links of every length a bot name allows
// (and more), and its size is the smallest version that holds them.
func TestQRSVGDecodes(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"https://t.me/abcde_bot?start=ABCDEFGH",
		dashboard.PairingLink("test_buddi_bot", "K7PQ2MZX"),
		dashboard.PairingLink(strings.Repeat("b", 32), "23456789"),
		"HELLO WORLD 0123456789",
	} {
		svg, err := dashboard.QRSVG(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeQRSVG(svg)
		if err != nil || got != text {
			t.Errorf("%q reads back as %q (%v)", text, got, err)
		}
		// Level M holds 14, 26, 42, 62, 84 or 106 bytes in versions 1 to 6: no larger symbol
		// than the bytes need (the encoder may pack digits and capitals tighter).
		var n int
		if _, err := fmt.Sscanf(svg, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d`, &n); err != nil {
			t.Fatal(err)
		}
		want := 1
		for _, c := range []int{14, 26, 42, 62, 84, 106} {
			if len(text) <= c {
				break
			}
			want++
		}
		if version := (n - 8 - 17) / 4; version > want {
			t.Errorf("%q (%d bytes) is drawn as version %d, want %d at most", text, len(text), version, want)
		}
	}
}

// --- a QR code reader for the test: versions 1 to 6, level M, as ISO/IEC 18004 lays them ---

// decodeQRSVG reads an SVG from QRSVG: a well-formed document whose path is the dark modules,
// with a quiet zone of four modules, and decodes the symbol it draws.
func decodeQRSVG(svg string) (string, error) {
	var doc struct {
		XMLName xml.Name `xml:"svg"`
		ViewBox string   `xml:"viewBox,attr"`
		Path    struct {
			D string `xml:"d,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
		return "", fmt.Errorf("the SVG is not well-formed: %w", err)
	}
	var n int
	if _, err := fmt.Sscanf(doc.ViewBox, "0 0 %d %d", &n, new(int)); err != nil {
		return "", fmt.Errorf("viewBox %q: %w", doc.ViewBox, err)
	}
	const quiet = 4
	size := n - 2*quiet
	if size < 21 || (size-17)%4 != 0 {
		return "", fmt.Errorf("the symbol is %d modules wide: no QR version is", size)
	}
	dark := make([][]bool, size)
	for i := range dark {
		dark[i] = make([]bool, size)
	}
	runs := regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`).FindAllStringSubmatch(doc.Path.D, -1)
	if len(strings.Join(regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`).Split(doc.Path.D, -1), "")) != 0 {
		return "", errors.New("the path holds more than runs of modules")
	}
	for _, r := range runs {
		x, _ := strconv.Atoi(r[1])
		y, _ := strconv.Atoi(r[2])
		w, _ := strconv.Atoi(r[3])
		for i := x; i < x+w; i++ {
			row, col := y-quiet, i-quiet
			if row < 0 || col < 0 || row >= size || col >= size {
				return "", fmt.Errorf("a dark module in the quiet zone at %d,%d", i, y)
			}
			dark[row][col] = true
		}
	}
	return decodeQR(dark)
}

// decodeQR decodes a symbol of version 1 to 6 at level M (dark[row][col]), without error
// correction: a reader that finds what the encoder put there.
func decodeQR(dark [][]bool) (string, error) {
	size := len(dark)
	version := (size - 17) / 4
	if version > 6 {
		return "", fmt.Errorf("version %d: this reader stops at 6", version)
	}
	// The format: two bits of level and three of mask, BCH-coded and masked with 0x5412.
	var format int
	bit := func(row, col int) {
		format <<= 1
		if dark[row][col] {
			format |= 1
		}
	}
	for c := 0; c <= 5; c++ {
		bit(8, c)
	}
	bit(8, 7)
	bit(8, 8)
	bit(7, 8)
	for r := 5; r >= 0; r-- {
		bit(r, 8)
	}
	level, mask, best := -1, -1, 16
	for data := range 32 {
		code := data << 10
		for i := 14; i >= 10; i-- {
			if code&(1<<i) != 0 {
				code ^= 0x537 << (i - 10)
			}
		}
		code = (data<<10 | code) ^ 0x5412
		if d := popcount(code ^ format); d < best {
			level, mask, best = data>>3, data&7, d
		}
	}
	if best > 3 || level != 0 { // 00 is level M
		return "", fmt.Errorf("the format reads level %02b mask %d at distance %d: want level M", level, mask, best)
	}
	masked := func(r, c int) bool {
		switch mask {
		case 0:
			return (r+c)%2 == 0
		case 1:
			return r%2 == 0
		case 2:
			return c%3 == 0
		case 3:
			return (r+c)%3 == 0
		case 4:
			return (r/2+c/3)%2 == 0
		case 5:
			return r*c%2+r*c%3 == 0
		case 6:
			return (r*c%2+r*c%3)%2 == 0
		default:
			return ((r+c)%2+r*c%3)%2 == 0
		}
	}
	function := func(r, c int) bool {
		switch {
		case r <= 8 && c <= 8, r <= 8 && c >= size-8, r >= size-8 && c <= 8, r == 6, c == 6:
			return true
		case version >= 2:
			a := size - 7
			return r >= a-2 && r <= a+2 && c >= a-2 && c <= a+2
		}
		return false
	}
	// The codewords, in the zigzag from the bottom right, two columns at a time.
	var bits []bool
	up := true
	for right := size - 1; right > 0; right -= 2 {
		if right == 6 {
			right--
		}
		for k := range size {
			r := k
			if up {
				r = size - 1 - k
			}
			for _, c := range []int{right, right - 1} {
				if !function(r, c) {
					bits = append(bits, dark[r][c] != masked(r, c))
				}
			}
		}
		up = !up
	}
	// Level M's blocks: how many, and the data codewords of each (all equal up to version 6).
	blocks := [7][2]int{1: {1, 16}, 2: {1, 28}, 3: {1, 44}, 4: {2, 32}, 5: {2, 43}, 6: {4, 27}}[version]
	nb, per := blocks[0], blocks[1]
	if len(bits) < nb*per*8 {
		return "", fmt.Errorf("%d bits: too few for %d data codewords", len(bits), nb*per)
	}
	codeword := func(i int) int {
		v := 0
		for _, b := range bits[i*8 : i*8+8] {
			v <<= 1
			if b {
				v |= 1
			}
		}
		return v
	}
	var stream []bool
	for b := range nb {
		for k := range per {
			cw := codeword(k*nb + b)
			for i := 7; i >= 0; i-- {
				stream = append(stream, cw&(1<<i) != 0)
			}
		}
	}
	// The segments: numeric, alphanumeric or bytes, each with its count, up to the terminator.
	pos := 0
	read := func(n int) (int, bool) {
		if pos+n > len(stream) {
			return 0, false
		}
		v := 0
		for _, b := range stream[pos : pos+n] {
			v <<= 1
			if b {
				v |= 1
			}
		}
		pos += n
		return v, true
	}
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
	var out strings.Builder
	for {
		mode, ok := read(4)
		if !ok || mode == 0 {
			return out.String(), nil
		}
		switch mode {
		case 1: // numeric
			count, _ := read(10)
			for ; count >= 3; count -= 3 {
				v, _ := read(10)
				fmt.Fprintf(&out, "%03d", v)
			}
			switch count {
			case 2:
				v, _ := read(7)
				fmt.Fprintf(&out, "%02d", v)
			case 1:
				v, _ := read(4)
				fmt.Fprintf(&out, "%d", v)
			}
		case 2: // alphanumeric
			count, _ := read(9)
			for ; count >= 2; count -= 2 {
				v, _ := read(11)
				if v/45 >= len(alnum) {
					return "", fmt.Errorf("alphanumeric pair %d", v)
				}
				out.WriteByte(alnum[v/45])
				out.WriteByte(alnum[v%45])
			}
			if count == 1 {
				v, _ := read(6)
				out.WriteByte(alnum[v%45])
			}
		case 4: // bytes
			count, _ := read(8)
			for range count {
				v, ok := read(8)
				if !ok {
					return "", errors.New("the byte segment runs past the data")
				}
				out.WriteByte(byte(v))
			}
		default:
			return "", fmt.Errorf("mode %04b after %q", mode, out.String())
		}
	}
}

func popcount(v int) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}
