package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/action"
	"buddi/core/notify"
	"buddi/core/redact"
	"buddi/core/seal"
	"buddi/runtime/run"
	"buddi/scheduler"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/telegram"
)

// Secrets is what the composition root reads from the vault.
type Secrets interface {
	// Get returns the value stored under name.
	Get(name string) (string, error)
}

// notifier is notifyOwner as buddi serve wires it: the dashboard's pages say whether the
// owner is here, and the paired phone (when a bot token is in the vault) takes the pushes.
func notifier(pool *pgxpool.Pool, secrets Secrets, scrub redact.Scrubber, key seal.Key, presence *dashboard.Presence, reusable func(tool string) bool, log *slog.Logger) *notify.Notifier {
	n := &notify.Notifier{Pool: pool, Present: presence.Here, Scrub: scrub, Log: log}
	if token, err := secrets.Get("TELEGRAM_BOT_TOKEN"); err == nil && token != "" {
		api, store := TelegramAPI(token), &telegram.Store{Pool: pool, Scrub: scrub, Key: key, Log: log}
		n.Phone = telegramPhone{api: api, store: store, cards: telegram.New(telegram.Deps{API: api, Store: store, Reusable: reusable, Log: log})}
	}
	return n
}

// askOwner tells the owner of an approval an unattended run waits on: on Home it is a card
// already; on the phone it arrives as the card with its buttons.
func askOwner(t scheduler.Tell) func(ctx context.Context, m run.Meta, rec action.Record) {
	return func(ctx context.Context, m run.Meta, rec action.Record) {
		t(ctx, notify.Notice{Key: notify.KindApproval + ":" + rec.ID, Kind: notify.KindApproval, Title: "Needs you: " + rec.Envelope.Summary,
			Body: rec.Envelope.Preview, Link: "#/home", ConversationID: m.ConversationID})
	}
}

// tell is n.Owner for callers that go on whatever happens: a notice that cannot be written
// is logged (the event that decided it is in the log already).
func tell(n *notify.Notifier, log *slog.Logger) scheduler.Tell {
	return func(ctx context.Context, notice notify.Notice) {
		if _, err := n.Owner(ctx, notice); err != nil {
			log.Warn("the owner could not be told", "kind", notice.Kind, "key", notice.Key, "err", err)
		}
	}
}

// incidentTeller tells the owner of a dead-letter incident: urgent, once per message a day.
func incidentTeller(t scheduler.Tell) func(string) {
	return func(msg string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		t(ctx, notify.Notice{Key: fmt.Sprintf("incident:%s:%s", time.Now().UTC().Format(time.DateOnly), msg), Kind: "incident",
			Urgency: notify.Urgent, Title: "Work was lost", Body: msg, Link: "#/"})
	}
}

// telegramPhone pushes notices to the paired phones (those whose pairing buddi sealed).
type telegramPhone struct {
	api   *telegram.API
	store *telegram.Store
	cards *telegram.Bot // sends an approval's card with its buttons; nil sends it as text
}

// Push sends r to every paired phone; notify.ErrNoPhone when none is paired.
func (p telegramPhone) Push(ctx context.Context, r notify.Row) error {
	devices, err := p.store.Devices(ctx)
	if err != nil {
		return fmt.Errorf("read the paired phones: %w", err)
	}
	text := "*" + r.Title + "*"
	if r.Body != "" {
		text += "\n\n" + r.Body
	}
	sent := 0
	for _, d := range devices {
		if !d.Sealed {
			continue
		}
		if id, ok := strings.CutPrefix(r.Key, notify.KindApproval+":"); ok && r.Kind == notify.KindApproval && p.cards != nil {
			if err := p.cards.SendCard(ctx, d.ChatID, id, r.Title, r.Body); err != nil {
				return fmt.Errorf("push the card to the phone: %w", err)
			}
			sent++
			continue
		}
		if _, err := p.api.SendMessage(ctx, d.ChatID, text, nil); err != nil {
			return fmt.Errorf("push to the phone: %w", err)
		}
		sent++
	}
	if sent == 0 {
		return notify.ErrNoPhone
	}
	return nil
}
