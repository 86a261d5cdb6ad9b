package app

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"buddi/core/notify"
	"buddi/core/seal"
	"buddi/internal/pgtest"
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
