package app

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/action"
	"buddi/core/executor"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/health"
	"buddi/runtime/run"
	"buddi/runtime/transport"
	"buddi/surfaces/telegram"
)

// TelegramAPIURL is the Bot API's base URL: BUDDI_TELEGRAM_API_URL, else the public one.
func TelegramAPIURL() string {
	if u := strings.TrimRight(os.Getenv("BUDDI_TELEGRAM_API_URL"), "/"); u != "" {
		return u
	}
	return telegram.DefaultAPIURL
}

// TelegramAPI is the Bot API for token over the one outbound transport, with a read deadline
// past the long poll.
func TelegramAPI(token string) *telegram.API {
	client := transport.New(transport.Config{ReadIdleTimeout: 45 * time.Second, ResponseHeaderTimeout: 45 * time.Second}).Client()
	return &telegram.API{Base: TelegramAPIURL(), Token: token, HTTP: client}
}

// telegramDecide decides an action from a Telegram button: the trust core's one claim, with
// the execution (or the run's resumption) enqueued in the same transaction.
func telegramDecide(pool *pgxpool.Pool, insert executor.Inserter, reg *registry.Registry, key seal.Key) func(ctx context.Context, d action.Decision) (action.Record, error) {
	return func(ctx context.Context, d action.Decision) (action.Record, error) {
		d.Surface = telegram.Surface
		return executor.Decide(ctx, pool, run.JobQueue{Inserter: insert}, reg, key, d)
	}
}

// telegramReusable says which tools allow a standing permission, so their cards offer
// "Approve & remember".
func telegramReusable(reg *registry.Registry) func(tool string) bool {
	reusable := map[string]bool{}
	if reg == nil {
		return func(string) bool { return false }
	}
	for _, spec := range reg.Tools() {
		reusable[spec.Name] = spec.ReusableApproval
	}
	return func(tool string) bool { return reusable[tool] }
}

// telegramHealth reads the surface's part of the health report.
func telegramHealth(ctx context.Context, pool *pgxpool.Pool) *health.Telegram {
	st := &telegram.Store{Pool: pool}
	h := &health.Telegram{SinceLastPollSeconds: -1}
	if last, err := st.LastPoll(ctx); err == nil && !last.IsZero() {
		h.SinceLastPollSeconds = int64(time.Since(last).Seconds())
	}
	_ = pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.system_flags WHERE key = 'telegram_down')`).Scan(&h.Down)
	return h
}
