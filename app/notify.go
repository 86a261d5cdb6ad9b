package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/notify"
	"buddi/core/redact"
	"buddi/core/seal"
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
func notifier(pool *pgxpool.Pool, secrets Secrets, scrub redact.Scrubber, key seal.Key, presence *dashboard.Presence, log *slog.Logger) *notify.Notifier {
	n := &notify.Notifier{Pool: pool, Present: presence.Here, Scrub: scrub, Log: log}
	if token, err := secrets.Get("TELEGRAM_BOT_TOKEN"); err == nil && token != "" {
		n.Phone = telegramPhone{api: TelegramAPI(token), store: &telegram.Store{Pool: pool, Scrub: scrub, Key: key, Log: log}}
	}
	return n
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
