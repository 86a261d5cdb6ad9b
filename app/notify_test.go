package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/core/notify"
	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/plugins"
	"buddi/runtime/run"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/telegram"
	"buddi/surfaces/telegram/telegramtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A reminder that comes due while the owner is away from the dashboard arrives on the paired
// phone, once; with the dashboard open it stays there. With no phone paired, the row says so
// and the dashboard still lists it.
func TestNoticeReachesThePairedPhone(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	key, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	bot := telegramtest.New(t)
	store := &telegram.Store{Pool: pool, Key: key}
	n := &notify.Notifier{Pool: pool, Present: (&dashboard.Presence{}).Here,
		Phone: telegramPhone{api: &telegram.API{Base: bot.URL, Token: telegramtest.Token, HTTP: &http.Client{}}, store: store}}

	lonely, err := n.Owner(ctx, notify.Notice{Key: "reminder:0", Kind: "reminder", Title: "Water the plants"})
	if err != nil {
		t.Fatal(err)
	}
	if lonely.PushedAt != nil || !strings.Contains(lonely.PushError, "pair") {
		t.Fatalf("no phone paired: pushed at %v, error %q", lonely.PushedAt, lonely.PushError)
	}

	code, _, err := store.NewPairingCode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Pair(ctx, code, telegram.User{ID: 42, FirstName: "Ann"}, 4242); err != nil {
		t.Fatal(err)
	}
	reminder := notify.Notice{Key: "reminder:1", Kind: "reminder", Title: "Call the dentist", Body: "You asked to be reminded at 15:00."}
	for range 2 { // the second is a rerun of the job that decided it
		if _, err := n.Owner(ctx, reminder); err != nil {
			t.Fatal(err)
		}
	}
	sends := bot.Calls("sendMessage")
	if len(sends) != 1 || sends[0].Params["chat_id"].(float64) != 4242 || !strings.Contains(sends[0].Params["text"].(string), "Call the dentist") {
		t.Fatalf("sendMessage calls: %+v; want the reminder once, to the paired chat", sends)
	}

	n.Present = func() bool { return true }
	if _, err := n.Owner(ctx, notify.Notice{Key: "reminder:2", Kind: "reminder", Title: "Stretch"}); err != nil {
		t.Fatal(err)
	}
	if got := len(bot.Calls("sendMessage")); got != 1 {
		t.Fatalf("%d sends: a normal notice went to the phone while the owner was on the dashboard", got)
	}
}

// An approval that unattended work waits on reaches the paired phone as its card, with the
// choice's options and Approve and Reject as buttons, once however often it is told; Home,
// which shows the card itself, does not list it again among what arrived.
func TestUnattendedApprovalReachesThePhoneAsACard(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	key, err := seal.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	bot := telegramtest.New(t)
	api := &telegram.API{Base: bot.URL, Token: telegramtest.Token, HTTP: &http.Client{}}
	store := &telegram.Store{Pool: pool, Key: key}
	n := &notify.Notifier{Pool: pool, Present: (&dashboard.Presence{}).Here,
		Phone: telegramPhone{api: api, store: store, cards: telegram.New(telegram.Deps{API: api, Store: store})}}
	code, _, err := store.NewPairingCode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Pair(ctx, code, telegram.User{ID: 42, FirstName: "Ann"}, 4242); err != nil {
		t.Fatal(err)
	}
	var rec action.Record
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rec, err = action.Create(ctx, tx, key, action.Proposal{
			Call:    plugins.Call{Tool: "mail.send", Args: json.RawMessage(`{}`), Agent: "helper", RunID: "run-1"},
			Version: "1",
			Envelope: plugins.Envelope{Summary: "Send the weekly mail", Preview: "To: ann@example.com", Effects: []plugins.Effect{plugins.EffectNetWrite},
				Choices: []plugins.Choice{{Name: "from", Options: []string{"home", "work"}, Default: "home"}}},
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ask := askOwner(tell(n, slog.New(slog.DiscardHandler)))
	for range 2 {
		ask(ctx, run.Meta{RunID: "run-1", Agent: "helper"}, rec)
	}
	sends := bot.Calls("sendMessage")
	if len(sends) != 1 {
		t.Fatalf("%d sends; want the card once", len(sends))
	}
	if txt, _ := sends[0].Params["text"].(string); !strings.Contains(txt, "Send the weekly mail") || !strings.Contains(txt, "Choose from: home / work") {
		t.Errorf("the card's text: %q", txt)
	}
	markup, _ := json.Marshal(sends[0].Params["reply_markup"])
	for _, want := range []string{`"Approve"`, `"Reject"`, `"✓ home"`, `"work"`} {
		if !strings.Contains(string(markup), want) {
			t.Errorf("the card has no %s button: %s", want, markup)
		}
	}
	rows, err := notify.List(ctx, pool, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Kind != notify.KindApproval || rows[0].PushedAt == nil {
		t.Fatalf("the approval's row: %+v", rows)
	}
	srv := httptest.NewServer(dashboard.NewServer(dashboard.Deps{Pool: pool, Addr: "", CLIToken: "t0k"}).Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/api/notifications", nil)
	req.Header.Set("Authorization", "Bearer t0k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ Notifications []notify.Row }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /api/notifications: %d %v", resp.StatusCode, err)
	}
	if len(got.Notifications) != 0 {
		t.Errorf("Home lists the approval among what arrived too: %+v", got.Notifications)
	}
}
