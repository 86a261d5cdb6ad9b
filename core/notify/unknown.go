package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"buddi/core/events"
)

// UnknownWatch tells the owner, urgently, of every effect whose outcome cannot be known (an
// action.unknown event: an approved action or an auto or session call that was dispatched
// when buddi stopped, or that timed out after it began): the owner is the only one who can
// look whether it happened. Whatever path wrote the event, this is the one that tells; it
// runs every minute and at start, and a rerun tells nothing twice (the key is the event's).
type UnknownWatch struct {
	Notifier *Notifier // tells the owner
}

// UnknownArgs is the watch's periodic job.
type UnknownArgs struct{}

// Kind is River's name for the job.
func (UnknownArgs) Kind() string { return "notify.unknown" }

// Register adds the watch's worker.
func (u UnknownWatch) Register(w *river.Workers) error {
	return river.AddWorkerSafely(w, &unknownWorker{n: u.Notifier})
}

// Periodic returns the watch's timer: every minute, and at start.
func (UnknownWatch) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Minute), func() (river.JobArgs, *river.InsertOpts) {
		return UnknownArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})}
}

type unknownWorker struct {
	river.WorkerDefaults[UnknownArgs]
	n *Notifier
}

// unknownKind is the kind of the notices the watch writes; their keys end in the event's id.
const unknownKind = string(events.ActionUnknown)

func (w *unknownWorker) Work(ctx context.Context, _ *river.Job[UnknownArgs]) error {
	return w.n.TellUnknown(ctx)
}

// TellUnknown tells the owner of each action.unknown event not told yet, oldest first.
func (n *Notifier) TellUnknown(ctx context.Context) error {
	rows, err := n.Pool.Query(ctx, `SELECT id, COALESCE(conversation_id::text, ''), payload FROM core.events
		WHERE kind = $1 AND id > (SELECT COALESCE(max(split_part(key, ':', 2)::bigint), 0) FROM core.owner_notifications WHERE kind = $1)
		ORDER BY id LIMIT 100`, unknownKind)
	if err != nil {
		return fmt.Errorf("find effects of unknown outcome: %w", err)
	}
	type found struct {
		id      int64
		conv    string
		payload events.ActionUnknownPayload
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (found, error) {
		var f found
		var raw []byte
		if err := r.Scan(&f.id, &f.conv, &raw); err != nil {
			return f, err
		}
		_ = json.Unmarshal(raw, &f.payload) // an unreadable payload is told without its details
		return f, nil
	})
	if err != nil {
		return fmt.Errorf("find effects of unknown outcome: %w", err)
	}
	for _, f := range list {
		what, link := "An effect", "#/activity"
		switch {
		case f.payload.Tool != "":
			what = "A call of " + f.payload.Tool
		case f.payload.ActionID != "":
			what, link = "An approved action", "#/approvals/"+f.payload.ActionID
		}
		body := what + " may or may not have happened: look whether it did before doing it again."
		if f.payload.Reason != "" {
			body += " (" + f.payload.Reason + ")"
		}
		if _, err := n.Owner(ctx, Notice{Key: "action.unknown:" + strconv.FormatInt(f.id, 10), Kind: unknownKind, Urgency: Urgent,
			Title: "Whether it happened is unknown", Body: body, Link: link, ConversationID: f.conv}); err != nil {
			return err
		}
	}
	return nil
}
