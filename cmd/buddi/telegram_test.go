package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
	"buddi/surfaces/telegram/telegramtest"
)

// The phone, end to end: the bot set up from standard input, a pairing code redeemed with
// /start, a message answered by the default agent on the scripted model, streamed by edits;
// then a reminder that comes due while the owner is away from the dashboard arrives on it.
func TestTelegramEndToEnd(t *testing.T) {
	model := pt.New(t)
	api := telegramtest.New(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, model.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	home, port, vars := env(t, "BUDDI_VAULT_KEY=aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE=", "SSL_CERT_FILE="+ca, "BUDDI_TELEGRAM_API_URL="+api.URL)
	steps := []struct {
		input string
		args  []string
	}{
		{"", []string{"db", "migrate"}},
		{pt.APIKey + "\n", []string{"vault", "set", "MODEL_KEY"}},
		{"", []string{"accounts", "add", "scripted", "--wire", "anthropic", "--base-url", model.URL, "--secret", "MODEL_KEY"}},
		{"", []string{"agents", "set", "@buddi", "--account", "scripted", "--model", "model-one"}},
		{telegramtest.Token + "\n", []string{"telegram", "setup"}},
	}
	for _, st := range steps {
		if code, out, errOut := runWithInput(t, vars, st.input, st.args...); code != 0 {
			t.Fatalf("%v: %d %s%s", st.args, code, out, errOut)
		}
	}
	if code, _, errOut := runWithInput(t, vars, "not-a-token\n", "telegram", "setup"); code != 1 || !strings.Contains(errOut, "refused that token") {
		t.Fatalf("a bad token: %d %s", code, errOut)
	}
	code, out, _ := runBuddi(t, vars, time.Minute, "telegram", "pair", "--json")
	var pair struct{ Code, Link string }
	if err := json.Unmarshal([]byte(out), &pair); code != 0 || err != nil || !strings.Contains(pair.Link, "t.me/test_buddi_bot?start="+pair.Code) {
		t.Fatalf("pair: %d %s", code, out)
	}
	s := startServe(t, home, port, vars)
	s.health()
	from := map[string]any{"id": 42, "is_bot": false, "first_name": "Ann"}
	chat := map[string]any{"id": 4242, "type": "private"}
	api.Push(map[string]any{"update_id": 1, "message": map[string]any{"message_id": 1, "from": from, "chat": chat, "text": "/start " + pair.Code}})
	model.Script(pt.Text("Hi from ", "buddi."))
	api.Push(map[string]any{"update_id": 2, "message": map[string]any{"message_id": 2, "from": from, "chat": chat, "text": "hello"}})
	waitFor(t, "the reply on the phone", time.Minute, func() bool {
		for _, c := range append(api.Calls("editMessageText"), api.Calls("sendMessage")...) {
			if strings.Contains(c.Params["text"].(string), "Hi from buddi.") {
				return true
			}
		}
		return false
	})
	code, out, _ = runBuddi(t, vars, time.Minute, "telegram", "devices", "--json")
	if code != 0 || !strings.Contains(out, `"chat_id": 4242`) {
		t.Fatalf("devices: %d %s", code, out)
	}
	rep := s.health()
	if rep.Telegram == nil || rep.Telegram.Down || rep.Telegram.SinceLastPollSeconds < 0 {
		t.Fatalf("health's telegram: %+v", rep.Telegram)
	}
	if _, out, _ := runBuddi(t, vars, time.Minute, "doctor"); !strings.Contains(out, "last poll") {
		t.Fatalf("doctor does not show the last poll:\n%s", out)
	}
	// A reminder comes due while no dashboard page is open: the agent's report of it arrives
	// on the paired phone.
	conn := dbConn(t, home)
	model.Script(pt.Tools(pt.ToolCall{ID: "toolu_report", Name: provider.WireToolName("mission.report"), Args: `{"report":"Call the dentist before 15:00."}`}),
		pt.Text("Reported."))
	if _, err := conn.Exec(context.Background(), `INSERT INTO core.reminders (agent, note, due_at) VALUES ('concierge', 'call the dentist', now())`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reminder's report on the phone", 2*time.Minute, func() bool {
		for _, c := range api.Calls("sendMessage") {
			if strings.Contains(c.Params["text"].(string), "Call the dentist before 15:00.") && c.Params["chat_id"].(float64) == 4242 {
				return true
			}
		}
		return false
	})

	// Whoever can write the database names another bot and pairs another device: the list says
	// the device pairs no one, and no pairing link is made to a bot buddi did not record.
	if _, err := conn.Exec(context.Background(), `INSERT INTO core.surface_identities (surface, user_id, chat_id, name) VALUES ('telegram', 7, 77, 'Mallory')`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `UPDATE core.system_flags SET value = '{"username":"evil_bot","id":1}' WHERE key = 'telegram_bot'`); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runBuddi(t, vars, time.Minute, "telegram", "devices"); code != 0 || !strings.Contains(out, "not sealed") || !strings.Contains(out, "pair your phone again") {
		t.Fatalf("devices with a forged one: %d %s", code, out)
	}
	if code, out, errOut := runBuddi(t, vars, time.Minute, "telegram", "pair"); code != 3 || strings.Contains(out+errOut, "evil_bot") || !strings.Contains(errOut, "telegram setup") {
		t.Fatalf("pair with a forged bot record: %d %s%s", code, out, errOut)
	}
}
