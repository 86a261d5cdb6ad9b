package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Querier runs the scrape's queries: a pool or a connection.
type Querier interface {
	// Query runs a query of many rows.
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	// QueryRow runs a query of one row.
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Sources are what /metrics reads at scrape time. The zero value serves the instruments only.
type Sources struct {
	// DB is the application's database: approvals waiting and the queue's jobs are counted
	// there. Nil leaves those out.
	DB Querier
	// RiverSchema is the schema of River's tables. Default "river".
	RiverSchema string
	// TelegramLastPoll, when set (a bot token is set), tells when a poll of Telegram last
	// succeeded (zero: never).
	TelegramLastPoll func(ctx context.Context) (time.Time, error)
	// Timeout bounds the scrape's queries together. Default 3 s.
	Timeout time.Duration
	// Log receives what could not be read, tagged service=metrics. Default: discard.
	Log *slog.Logger
}

// Handler serves the instruments and what src reads, in Prometheus's text format. It applies
// no access rule of its own: mount it behind the owner's credential.
func Handler(src Sources) http.Handler {
	if src.Log == nil {
		src.Log = slog.New(slog.DiscardHandler)
	}
	src.Log = src.Log.With("service", "metrics")
	if src.RiverSchema == "" {
		src.RiverSchema = "river"
	}
	if src.Timeout <= 0 {
		src.Timeout = 3 * time.Second
	}
	scraped := prometheus.NewRegistry()
	scraped.MustRegister(&database{src: src})
	return promhttp.HandlerFor(prometheus.Gatherers{registry, scraped}, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(src.Log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

var (
	approvalsWaitingDesc = prometheus.NewDesc("buddi_approvals_waiting",
		"Approvals waiting for the owner's decision (pending and not expired).", nil, nil)
	queueJobsDesc = prometheus.NewDesc("buddi_queue_jobs",
		"Jobs in the queue, by kind and state (available, running, scheduled, retryable, completed, …).", []string{"kind", "state"}, nil)
	queueOldestDesc = prometheus.NewDesc("buddi_queue_oldest_available_seconds",
		"How long the oldest job that is due and not yet taken has been waiting, by kind (0 when none waits).", []string{"kind"}, nil)
	telegramPollDesc = prometheus.NewDesc("buddi_telegram_poll_age_seconds",
		"Seconds since a poll of Telegram last succeeded (-1: none yet); only with a bot token set.", nil, nil)
)

// database reads the scrape-time figures.
type database struct{ src Sources }

// Describe implements prometheus.Collector.
func (d *database) Describe(ch chan<- *prometheus.Desc) {
	ch <- approvalsWaitingDesc
	ch <- queueJobsDesc
	ch <- queueOldestDesc
	ch <- telegramPollDesc
}

// Collect implements prometheus.Collector: each figure that cannot be read is an error of the
// scrape (logged), and the others are served.
func (d *database) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), d.src.Timeout)
	defer cancel()
	if d.src.DB != nil {
		d.approvals(ctx, ch)
		d.queue(ctx, ch)
	}
	if d.src.TelegramLastPoll != nil {
		age := -1.0
		last, err := d.src.TelegramLastPoll(ctx)
		switch {
		case err != nil:
			ch <- prometheus.NewInvalidMetric(telegramPollDesc, fmt.Errorf("read Telegram's last poll: %w", err))
			return
		case !last.IsZero():
			age = time.Since(last).Seconds()
		}
		ch <- prometheus.MustNewConstMetric(telegramPollDesc, prometheus.GaugeValue, age)
	}
}

func (d *database) approvals(ctx context.Context, ch chan<- prometheus.Metric) {
	var n int64
	err := d.src.DB.QueryRow(ctx, `SELECT count(*) FROM core.approvals p JOIN core.actions a ON a.id = p.action_id
		WHERE p.state = 'pending' AND a.expires_at > now()`).Scan(&n)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(approvalsWaitingDesc, fmt.Errorf("count the approvals waiting: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(approvalsWaitingDesc, prometheus.GaugeValue, float64(n))
}

func (d *database) queue(ctx context.Context, ch chan<- prometheus.Metric) {
	rows, err := d.src.DB.Query(ctx, `SELECT kind, state::text, count(*),
		COALESCE(EXTRACT(EPOCH FROM now() - min(scheduled_at) FILTER (WHERE state = 'available' AND scheduled_at <= now())), 0)::float8
		FROM `+pgx.Identifier{d.src.RiverSchema, "river_job"}.Sanitize()+` GROUP BY kind, state`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueJobsDesc, fmt.Errorf("count the queue's jobs: %w", err))
		return
	}
	oldest := map[string]float64{}
	var out []prometheus.Metric
	for rows.Next() {
		var kind, state string
		var n int64
		var wait float64
		if err := rows.Scan(&kind, &state, &n, &wait); err != nil {
			rows.Close()
			ch <- prometheus.NewInvalidMetric(queueJobsDesc, fmt.Errorf("read the queue's jobs: %w", err))
			return
		}
		out = append(out, prometheus.MustNewConstMetric(queueJobsDesc, prometheus.GaugeValue, float64(n), kind, state))
		oldest[kind] = max(oldest[kind], wait)
	}
	if err := rows.Err(); err != nil {
		ch <- prometheus.NewInvalidMetric(queueJobsDesc, fmt.Errorf("read the queue's jobs: %w", err))
		return
	}
	for _, m := range out {
		ch <- m
	}
	for kind, wait := range oldest {
		ch <- prometheus.MustNewConstMetric(queueOldestDesc, prometheus.GaugeValue, wait, kind)
	}
}
