package eventlog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/events"
)

// Recorder appends events from code that must never wait on the database, such as a
// supervisor deciding a restart (perhaps of the database's own actor). Record queues the event
// and returns at once; a background writer appends it, retrying while the database is away.
// When the queue is full the event is logged and dropped rather than blocking the caller.
type Recorder struct {
	pool  *pgxpool.Pool
	log   *slog.Logger
	queue chan pending
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

type pending struct {
	kind           events.Kind
	conversationID string
	payload        any
}

// NewRecorder starts a recorder writing to pool; Close flushes and stops it.
func NewRecorder(pool *pgxpool.Pool, log *slog.Logger) *Recorder {
	r := &Recorder{
		pool:  pool,
		log:   log.With("service", "eventlog"),
		queue: make(chan pending, 256),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go r.run()
	return r
}

// Record queues one event without blocking; kind and payload are as Append takes them.
func (r *Recorder) Record(kind events.Kind, conversationID string, payload any) {
	select {
	case r.queue <- pending{kind, conversationID, payload}:
	default:
		r.log.Error("event queue full; event dropped", "kind", kind, "payload", payload)
	}
}

func (r *Recorder) run() {
	defer close(r.done)
	for {
		select {
		case p := <-r.queue:
			r.write(p)
		case <-r.stop:
			for {
				select {
				case p := <-r.queue:
					r.write(p)
				default:
					return
				}
			}
		}
	}
}

// write appends p, retrying with a growing pause for up to a minute, or until Close.
func (r *Recorder) write(p pending) {
	wait := 50 * time.Millisecond
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := Append(ctx, r.pool, p.kind, p.conversationID, p.payload)
		cancel()
		if err == nil {
			return
		}
		stopping := false
		select {
		case <-r.stop:
			stopping = true
		default:
		}
		if stopping || time.Now().After(deadline) {
			r.log.Error("event not recorded", "kind", p.kind, "payload", p.payload, "err", err)
			return
		}
		r.log.Warn("recording event failed; retrying", "kind", p.kind, "err", err)
		select {
		case <-time.After(wait):
		case <-r.stop:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// Close writes what is queued (one attempt each) and stops the writer.
func (r *Recorder) Close() {
	r.once.Do(func() { close(r.stop) })
	<-r.done
}
