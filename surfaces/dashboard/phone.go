package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"buddi/health"
	"buddi/surfaces/telegram"
	"buddi/tailnet"
)

// Phone serves Settings → Telegram and Settings → Tailnet.
type Phone struct {
	// Telegram is the Telegram surface's store (*telegram.Store with the installation's seal
	// key); nil leaves the Telegram routes out.
	Telegram TelegramStore
	// Previews reads and sets the switch that gives developer processes tailnet ports of their
	// own (*developer.Store); nil leaves the Tailnet routes out.
	Previews TailnetPreviews
	// AuthKey says where a tailnet auth key is kept ("the vault", "TS_AUTHKEY"), or "" when
	// none is; it never returns the key. nil: the page says nothing about it.
	AuthKey func() (from string, err error)
	// Hostname is the name the tailnet node asks for (BUDDI_TAILNET_HOSTNAME).
	Hostname string
}

// TelegramStore is the Telegram surface's state as Settings → Telegram uses it
// (*telegram.Store).
type TelegramStore interface {
	// Bot reads the bot's record; found is false when `buddi telegram setup` never ran, and a
	// record buddi did not seal comes back with Refused set.
	Bot(ctx context.Context) (bot telegram.BotRecord, found bool, err error)
	// NewPairingCode issues a one-time code, valid telegram.PairingTTL.
	NewPairingCode(ctx context.Context) (code string, expires time.Time, err error)
	// Devices lists the live paired identities, sealed or not.
	Devices(ctx context.Context) ([]telegram.Device, error)
	// Unpair removes a paired identity.
	Unpair(ctx context.Context, id int64) error
}

// TailnetPreviews is the tailnet previews switch (*developer.Store).
type TailnetPreviews interface {
	// TailnetPreviews reports whether each developer process gets a tailnet port of its own.
	TailnetPreviews(ctx context.Context) (bool, error)
	// SetTailnetPreviews sets it.
	SetTailnetPreviews(ctx context.Context, on bool) error
}

// phoneRoutes registers the Telegram and Tailnet settings routes when Deps.Phone is set.
func (s *Server) phoneRoutes() {
	p := s.deps.Phone
	if p == nil {
		return
	}
	if p.Telegram != nil {
		s.handle("GET /api/telegram", s.telegramSettings)
		s.write("POST /api/telegram/pair", s.telegramPair)
		s.write("POST /api/telegram/devices/{id}/unpair", s.telegramUnpair)
	}
	if p.Previews != nil {
		s.handle("GET /api/tailnet", s.tailnetSettings)
		s.write("POST /api/tailnet/enabled", s.tailnetEnabled)
		s.write("POST /api/tailnet/previews", s.tailnetPreviews)
		s.write("POST /api/tailnet/owner", s.tailnetOwner)
	}
}

// report is the health report, for the parts the surfaces' pages show (nil Health: none).
func (s *Server) report(ctx context.Context) health.Report {
	if s.deps.Health == nil {
		return health.Report{}
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return s.deps.Health(ctx)
}

// telegramView is Settings → Telegram: the bot, how its poller does, and the paired devices.
type telegramView struct {
	SetUp     bool              `json:"set_up"`            // a bot is recorded and sealed: pairing works
	Bot       string            `json:"bot,omitempty"`     // its @name, without the @
	Refused   string            `json:"refused,omitempty"` // why the stored record is not buddi's own
	Connected bool              `json:"connected"`         // the running buddi polls the bot
	Down      bool              `json:"down"`              // Telegram refused the token
	LastPoll  int64             `json:"since_last_poll"`   // seconds since a poll last succeeded; -1 never
	Sentence  string            `json:"sentence"`          // the state, in one sentence
	Fix       string            `json:"fix,omitempty"`     // what to do about it, when something is wrong
	Devices   []telegram.Device `json:"devices"`           // the paired devices
}

func (s *Server) telegramSettings(w http.ResponseWriter, r *http.Request) {
	st := s.deps.Phone.Telegram
	bot, found, err := st.Bot(r.Context())
	if err != nil {
		s.failed(w, r, "the Telegram bot's record could not be read", err)
		return
	}
	devices, err := st.Devices(r.Context())
	if err != nil {
		s.failed(w, r, "the paired devices could not be read", err)
		return
	}
	v := telegramView{Devices: append([]telegram.Device{}, devices...), LastPoll: -1}
	if tg := s.report(r.Context()).Telegram; tg != nil {
		v.Connected, v.Down, v.LastPoll = true, tg.Down, tg.SinceLastPollSeconds
	}
	switch {
	case !found:
		v.Sentence = "No Telegram bot is set up, so your phone gets nothing."
		v.Fix = "Make a bot with @BotFather, then run `buddi telegram setup` where buddi runs (the token is read there, never on this page) and restart buddi serve."
	case bot.Refused != "":
		v.Bot, v.Refused = bot.Username, bot.Refused
		v.Sentence = "The bot's record is not one buddi wrote (" + bot.Refused + "), so no pairing link is made to it."
		v.Fix = "Run `buddi telegram setup` again."
	default:
		v.SetUp, v.Bot = true, bot.Username
		switch {
		case v.Down:
			v.Sentence = fmt.Sprintf("Telegram refused @%s's token, so your phone gets nothing.", bot.Username)
			v.Fix = "Set a new token with `buddi telegram setup`, then restart buddi serve."
		case !v.Connected:
			v.Sentence = fmt.Sprintf("The bot @%s is set up, but this buddi started without it.", bot.Username)
			v.Fix = "Restart buddi serve to connect it."
		case v.LastPoll < 0:
			v.Sentence = fmt.Sprintf("The bot @%s has not heard from Telegram yet.", bot.Username)
		default:
			v.Sentence = fmt.Sprintf("The bot @%s last heard from Telegram %s ago.", bot.Username, ago(v.LastPoll))
		}
	}
	writeJSON(w, http.StatusOK, v)
}

// pairingView is a fresh pairing code: its t.me link, the link as a QR code, and its expiry.
type pairingView struct {
	Code      string    `json:"code"`       // the one-use code, for /start by hand
	Link      string    `json:"link"`       // the t.me link that opens the bot with the code
	QR        string    `json:"qr_svg"`     // the link's QR code, an SVG document
	ExpiresAt time.Time `json:"expires_at"` // when the code stops working, in UTC
	Sentence  string    `json:"sentence"`   // what to do with it, in one sentence
}

// telegramPair issues a one-use pairing code. A page reached over the tailnet may pair too:
// the code is single-use and lives ten minutes, and only its keyed hash is stored.
func (s *Server) telegramPair(w http.ResponseWriter, r *http.Request) {
	st := s.deps.Phone.Telegram
	bot, found, err := st.Bot(r.Context())
	if err != nil {
		s.failed(w, r, "the Telegram bot's record could not be read", err)
		return
	}
	if !found {
		writeError(w, http.StatusConflict, "no Telegram bot is set up: run `buddi telegram setup` where buddi runs, then pair here")
		return
	}
	// A code sent to another bot is a code given away: the link names only the bot buddi
	// recorded and sealed itself.
	if bot.Refused != "" {
		writeError(w, http.StatusConflict, fmt.Sprintf("the bot's record is not one buddi wrote (%s), so no link is made to it: run `buddi telegram setup` again", bot.Refused))
		return
	}
	code, expires, err := st.NewPairingCode(r.Context())
	if err != nil {
		s.failed(w, r, "a pairing code could not be made", err)
		return
	}
	link := PairingLink(bot.Username, code)
	svg, err := QRSVG(link)
	if err != nil {
		s.failed(w, r, "the pairing code could not be drawn", err)
		return
	}
	writeJSON(w, http.StatusCreated, pairingView{Code: code, Link: link, QR: svg, ExpiresAt: expires.UTC(),
		Sentence: fmt.Sprintf("Scan the code with your phone's camera or open the link on your phone (or send /start %s to @%s) within %d minutes. The code works once.",
			code, bot.Username, int(telegram.PairingTTL.Minutes()))})
}

// PairingLink is the t.me link that opens the bot with the pairing code.
func PairingLink(bot, code string) string { return fmt.Sprintf("https://t.me/%s?start=%s", bot, code) }

func (s *Server) telegramUnpair(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	st := s.deps.Phone.Telegram
	devices, err := st.Devices(r.Context())
	if err != nil {
		s.failed(w, r, "the paired devices could not be read", err)
		return
	}
	if !slices.ContainsFunc(devices, func(d telegram.Device) bool { return d.ID == id }) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no paired device %d: the page lists the paired ones", id))
		return
	}
	if err := st.Unpair(r.Context(), id); err != nil {
		s.failed(w, r, "the device could not be unpaired", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"unpaired": id})
}

// QRSVG draws the QR code of text as an SVG document: a light square the size of the symbol
// with its quiet zone of four modules, and one dark path, a module a unit, scaled by whoever
// shows it.
func QRSVG(text string) (string, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return "", fmt.Errorf("encode %d bytes as a QR code: %w", len(text), err)
	}
	bits := q.Bitmap()
	n := len(bits)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`, n, n)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", start, y, x-start, x-start)
		}
	}
	b.WriteString(`"/></svg>`)
	return b.String(), nil
}

// tailnetView is Settings → Tailnet: the saved switches, the owner's login, the auth key's
// whereabouts and, when this buddi runs it, the node.
type tailnetView struct {
	Enabled  bool            `json:"enabled"`            // the saved setting, for the next start
	Running  bool            `json:"running"`            // this buddi runs the node now
	Node     *health.Tailnet `json:"node,omitempty"`     // the node, when it runs
	Hostname string          `json:"hostname,omitempty"` // the name the node asks for
	Owner    string          `json:"owner"`              // the owner's login, "" until set
	Refused  string          `json:"refused,omitempty"`  // a stored login buddi did not seal: nobody's
	Previews bool            `json:"previews"`           // each developer process on a tailnet port
	AuthKey  string          `json:"auth_key"`           // where an auth key is kept, "" when none
	Sentence string          `json:"sentence"`           // on or off, and when that takes effect
	Problem  string          `json:"problem,omitempty"`  // what is wrong, in one sentence
	Fix      string          `json:"fix,omitempty"`      // what to do about it
}

func (s *Server) tailnetSettings(w http.ResponseWriter, r *http.Request) {
	p, ctx := s.deps.Phone, r.Context()
	v := tailnetView{Hostname: p.Hostname}
	var err error
	if v.Enabled, err = tailnet.Enabled(ctx, s.deps.Pool); err != nil {
		s.failed(w, r, "the tailnet setting could not be read", err)
		return
	}
	pinned, err := tailnet.ReadOwner(ctx, s.deps.Pool, s.deps.Seal)
	if err != nil {
		s.failed(w, r, "the owner's tailnet login could not be read", err)
		return
	}
	v.Owner, v.Refused = pinned.Login, pinned.Refused
	if v.Previews, err = p.Previews.TailnetPreviews(ctx); err != nil {
		s.failed(w, r, "the previews switch could not be read", err)
		return
	}
	if p.AuthKey != nil {
		if v.AuthKey, err = p.AuthKey(); err != nil {
			v.AuthKey = ""
			v.Problem = "buddi could not read its vault, so it cannot tell whether an auth key is stored: " + err.Error()
		}
	}
	v.Node = s.report(ctx).Tailnet
	v.Running = v.Node != nil
	v.Sentence = tailnetSentence(v.Enabled, v.Running)
	switch {
	case v.Problem != "":
	case v.Node != nil && v.Node.Problem != "":
		v.Problem = v.Node.Problem
	case v.Refused != "":
		v.Problem = fmt.Sprintf("The stored owner login %s carries no seal from this buddi (an earlier buddi wrote it, or it was written into the database), so the tailnet answers no one.", v.Refused)
		v.Fix = fmt.Sprintf("If %s is yours, set it again below.", v.Refused)
	case v.Owner == "" && (v.Enabled || v.Running):
		v.Problem = "No owner login is set, so the tailnet gets nothing but 403s."
		v.Fix = "Set your tailnet login below, or open a link from `buddi dashboard --tailnet` on your phone."
	}
	writeJSON(w, http.StatusOK, v)
}

// tailnetSentence says whether the tailnet is on, and that a change waits for the next start.
func tailnetSentence(enabled, running bool) string {
	switch {
	case enabled && running:
		return "buddi is on your tailnet."
	case enabled:
		return "The tailnet is on from the next start of buddi serve: this buddi started without it."
	case running:
		return "buddi is on your tailnet for this run (started with --tailnet); the saved setting is off, so the next start is without it."
	default:
		return "buddi is off the tailnet. Turned on, it joins at the next start of buddi serve."
	}
}

// switchBody is a switch's new state: {"on": true} or {"on": false}.
type switchBody struct {
	On *bool `json:"on"`
}

// decodeSwitch reads a switchBody, or answers the request and returns false.
func decodeSwitch(w http.ResponseWriter, r *http.Request) (bool, bool) {
	var b switchBody
	if !decodeBody(w, r, &b) {
		return false, false
	}
	if b.On == nil {
		writeError(w, http.StatusBadRequest, `say {"on": true} or {"on": false}`)
		return false, false
	}
	return *b.On, true
}

func (s *Server) tailnetEnabled(w http.ResponseWriter, r *http.Request) {
	on, ok := decodeSwitch(w, r)
	if !ok {
		return
	}
	if err := tailnet.SetEnabled(r.Context(), s.deps.Pool, on); err != nil {
		s.failed(w, r, "the tailnet setting could not be saved", err)
		return
	}
	out := map[string]any{"enabled": on, "sentence": "The tailnet is off from the next start of buddi serve."}
	if on {
		out["sentence"] = "The tailnet is on from the next start of buddi serve."
		if owner, err := tailnet.Owner(r.Context(), s.deps.Pool, s.deps.Seal); err == nil && owner == "" {
			out["sentence"] = "The tailnet is on from the next start of buddi serve. Set your tailnet login too: until then the tailnet gets 403s."
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) tailnetPreviews(w http.ResponseWriter, r *http.Request) {
	on, ok := decodeSwitch(w, r)
	if !ok {
		return
	}
	if err := s.deps.Phone.Previews.SetTailnetPreviews(r.Context(), on); err != nil {
		s.failed(w, r, "the previews switch could not be saved", err)
		return
	}
	sentence := "Developer processes get no tailnet ports; open ones close within a second."
	if on {
		sentence = "Each process a developer agent starts on a port also gets that port on the tailnet, for your login only."
	}
	writeJSON(w, http.StatusOK, map[string]any{"previews": on, "sentence": sentence})
}

func (s *Server) tailnetOwner(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Login string `json:"login"`
	}
	if !decodeBody(w, r, &b) {
		return
	}
	login := strings.TrimSpace(b.Login)
	if err := tailnet.ValidLogin(login); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := tailnet.SetOwner(r.Context(), s.deps.Pool, s.deps.Seal, login); err != nil {
		s.failed(w, r, "the owner's tailnet login could not be saved", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"owner": login, "sentence": fmt.Sprintf("On the tailnet, buddi answers %s and no one else.", login)})
}

// ago says a number of seconds as the owner reads it: "12 s", "3 min", "2 h 5 min".
func ago(seconds int64) string {
	switch d := time.Duration(seconds) * time.Second; {
	case d < time.Minute:
		return fmt.Sprintf("%d s", seconds)
	case d < time.Hour:
		return fmt.Sprintf("%d min", seconds/60)
	default:
		return fmt.Sprintf("%d h %d min", seconds/3600, seconds%3600/60)
	}
}
