package gateway

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/actors"
	"buddi/core/action"
	"buddi/core/executor"
	"buddi/core/registry"
	"buddi/health"
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
func telegramDecide(pool *pgxpool.Pool, insert executor.Inserter, reg *registry.Registry) func(ctx context.Context, id string, approve bool) (action.Record, error) {
	return func(ctx context.Context, id string, approve bool) (action.Record, error) {
		return executor.Decide(ctx, pool, insert, reg, action.Decision{ActionID: id, Approve: approve, Surface: "telegram"})
	}
}

// telegramActor runs the bot under root/surfaces: the poll loop on its own goroutine, stopped
// with the actor. A refused token leaves it idle (the surface is down, and says so); any other
// end of the loop fails the actor, and its supervisor restarts it.
type telegramActor struct {
	sys    *actors.System
	bot    *telegram.Bot
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
}

type telegramEnded struct{ err error }

func (a *telegramActor) Receive(c *actors.Context) {
	switch m := c.Message().(type) {
	case actors.Started:
		ctx, cancel := context.WithCancel(context.Background())
		a.cancel, a.done = cancel, make(chan struct{})
		self, done := c.Self(), a.done
		go func() {
			defer close(done)
			err := a.bot.Run(ctx)
			if ctx.Err() == nil {
				a.sys.Send(self, telegramEnded{err: err})
			}
		}()
	case telegramEnded:
		if errors.Is(m.err, telegram.ErrRevoked) {
			return // down until a new token: buddi doctor and /api/health say so
		}
		panic("telegram poller ended: " + errString(m.err))
	case actors.Stopping, actors.Restarting, actors.Drain:
		if a.cancel != nil {
			a.cancel()
			<-a.done
			a.cancel = nil
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "without an error"
	}
	return err.Error()
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
