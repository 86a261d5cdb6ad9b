// Package notify is notifyOwner (seed 004, "Notifications are rows, not state"): the one call
// through which buddi tells the owner something unasked. It writes a row of
// core.owner_notifications, routes it by urgency and presence, and pushes it to the owner's
// phone at most once per row.
//
// There is no outbox: the code that decided to tell the owner calls Owner itself, under the
// durable job it runs in. A rerun of that job (after a crash) finds the row by its key and
// pushes nothing the row says was pushed; a push that succeeded just before the process died
// and before pushed_at was written can be repeated, as the seed accepts.
package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/redact"
)

// Urgency says how much a notice may interrupt the owner.
type Urgency string

// The urgencies.
const (
	Urgent Urgency = "urgent" // on the dashboard and pushed to the phone, present or not
	Normal Urgency = "normal" // on the dashboard; pushed only when the owner is not there
	Info   Urgency = "info"   // kept for the weekly digest, never pushed
)

// The routes a notice can take.
const (
	RouteDashboard = "dashboard" // listed on Home
	RoutePhone     = "telegram"  // pushed to the paired phone
	RouteDigest    = "digest"    // folded into the weekly recap
)

// KindApproval is the kind of the notices of approvals that unattended work waits on; their
// key is "approval:" and the action's id. The dashboard draws such an approval as its card, so
// it does not list the notice again.
const KindApproval = "approval"

// Notice is one thing to tell the owner.
type Notice struct {
	// Key names the notice for good: a second Owner with the same key (a rerun of the job
	// that decided it) finds the first row and sends nothing it sent.
	Key            string
	Kind           string  // what it is about: mission.report, mission.still_useful, incident, action.unknown, …
	Urgency        Urgency // default Normal
	Title          string  // one line
	Body           string  // the rest; may be empty
	Link           string  // the dashboard page it concerns ("#/missions"); may be empty
	ConversationID string  // the conversation it came from; may be empty
}

// Row is a stored notice.
type Row struct {
	ID             int64      `json:"id"`                        // the row
	Key            string     `json:"key"`                       // the notice's key (unique)
	Kind           string     `json:"kind"`                      // what it is about
	Urgency        Urgency    `json:"urgency"`                   // urgent, normal or info
	Title          string     `json:"title"`                     // one line
	Body           string     `json:"body"`                      // the rest
	Link           string     `json:"link"`                      // the dashboard page it concerns
	ConversationID string     `json:"conversation_id,omitempty"` // where it came from
	Routes         []string   `json:"routes"`                    // where it went: dashboard, telegram, digest
	PushedAt       *time.Time `json:"pushed_at,omitempty"`       // when the phone took it
	PushError      string     `json:"push_error,omitempty"`      // why the phone did not
	SeenAt         *time.Time `json:"seen_at,omitempty"`         // when the owner saw it on the dashboard
	ActedAt        *time.Time `json:"acted_at,omitempty"`        // when the owner acted on it
	CreatedAt      time.Time  `json:"created_at"`                // when it was told
}

// Pusher sends a notice to the owner's phone.
type Pusher interface {
	// Push delivers r; ErrNoPhone when nothing is paired to deliver it to.
	Push(ctx context.Context, r Row) error
}

// ErrNoPhone is a Pusher's answer when no phone is paired.
var ErrNoPhone = errors.New("no phone is paired: pair one with `buddi telegram pair`")

// Notifier is notifyOwner. Pool is required; the rest may be nil.
type Notifier struct {
	Pool    *pgxpool.Pool   // where the rows are written
	Phone   Pusher          // the owner's phone; nil: none
	Present func() bool     // whether the owner has the dashboard open now; nil: never
	Scrub   redact.Scrubber // takes stored secrets out of what is told
	Log     *slog.Logger    // hears of failed pushes; nil discards
}

func (n *Notifier) log() *slog.Logger {
	if n.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return n.Log
}

// Route decides where a notice goes, from its urgency, whether the owner is on the dashboard
// now and whether there is a phone to push to.
func Route(u Urgency, present, phone bool) []string {
	switch u {
	case Info:
		return []string{RouteDigest}
	case Urgent:
		if phone {
			return []string{RouteDashboard, RoutePhone}
		}
	default:
		if phone && !present {
			return []string{RouteDashboard, RoutePhone}
		}
	}
	return []string{RouteDashboard}
}

// Owner tells the owner n: the row (written once per key, with an owner.notified event),
// then the push when its route says so and the row has not been pushed yet. A failed push
// is recorded on the row and logged, not returned: the notice is on the dashboard all the
// same. The error is the database's.
func (n *Notifier) Owner(ctx context.Context, notice Notice) (Row, error) {
	if notice.Key == "" || notice.Kind == "" || strings.TrimSpace(notice.Title) == "" {
		return Row{}, fmt.Errorf("notify the owner: a notice needs a key, a kind and a title (got %q, %q, %q)", notice.Key, notice.Kind, notice.Title)
	}
	if notice.Urgency == "" {
		notice.Urgency = Normal
	}
	if n.Scrub != nil {
		notice.Title, notice.Body = n.Scrub.String(notice.Title), n.Scrub.String(notice.Body)
	}
	notice.Title, notice.Body = redact.Storable(notice.Title), redact.Storable(notice.Body)
	present := n.Present != nil && n.Present()
	routes := Route(notice.Urgency, present, n.Phone != nil)
	var row Row
	err := pgx.BeginFunc(ctx, n.Pool, func(tx pgx.Tx) error {
		var inserted bool
		err := tx.QueryRow(ctx, `INSERT INTO core.owner_notifications (key, kind, urgency, title, body, link, conversation_id, routes)
			VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, '')::uuid, $8)
			ON CONFLICT (key) DO NOTHING RETURNING true`,
			notice.Key, notice.Kind, notice.Urgency, notice.Title, notice.Body, notice.Link, notice.ConversationID, routes).Scan(&inserted)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("notify the owner (%s): %w", notice.Key, err)
		}
		if row, err = get(ctx, tx, notice.Key); err != nil {
			return err
		}
		if !inserted {
			return nil // told already: this is a rerun
		}
		// An info notice waits for the weekly recap: it joins the digest the recap reads
		// (scheduler.Digest), beside the watchers' info findings.
		if hasRoute(routes, RouteDigest) {
			if _, err := tx.Exec(ctx, `INSERT INTO core.digest_items (sentinel, key, owner_line) VALUES ($1, $2, $3)
				ON CONFLICT (sentinel, key) WHERE consumed_at IS NULL DO NOTHING`, "notice:"+notice.Kind, notice.Key, digestLine(notice)); err != nil {
				return fmt.Errorf("fold notice %s into the digest: %w", notice.Key, err)
			}
		}
		_, err = eventlog.Append(ctx, tx, events.OwnerNotified, notice.ConversationID, events.OwnerNotifiedPayload{
			ID: row.ID, Kind: row.Kind, Urgency: string(row.Urgency), Routes: row.Routes})
		return err
	})
	if err != nil {
		return row, err
	}
	if !hasRoute(row.Routes, RoutePhone) || row.PushedAt != nil || row.PushError != "" || n.Phone == nil {
		return row, nil
	}
	// What goes to the phone is what this caller told, never the stored row's text: a row
	// written under the key behind buddi's back pushes nothing of its own.
	pushed := row
	pushed.Title, pushed.Body, pushed.Link = notice.Title, notice.Body, notice.Link
	perr := n.Phone.Push(ctx, pushed)
	if perr != nil {
		n.log().Warn("a notification was not pushed to the phone; it is on the dashboard", "key", row.Key, "err", perr)
		_, err = n.Pool.Exec(ctx, `UPDATE core.owner_notifications SET push_error = $2 WHERE id = $1`, row.ID, redact.Storable(perr.Error()))
	} else {
		_, err = n.Pool.Exec(ctx, `UPDATE core.owner_notifications SET pushed_at = now() WHERE id = $1`, row.ID)
	}
	if err != nil {
		return row, fmt.Errorf("record the push of notification %d: %w", row.ID, err)
	}
	return get(ctx, n.Pool, row.Key)
}

// digestLine is a notice as one line of the weekly digest: its title, and its body's first
// line when it has one.
func digestLine(n Notice) string {
	line := strings.TrimSpace(n.Title)
	if first, _, _ := strings.Cut(strings.TrimSpace(n.Body), "\n"); strings.TrimSpace(first) != "" {
		line += ": " + strings.TrimSpace(first)
	}
	return line
}

func hasRoute(routes []string, r string) bool {
	for _, x := range routes {
		if x == r {
			return true
		}
	}
	return false
}

const selectRow = `SELECT id, key, kind, urgency, title, body, link, COALESCE(conversation_id::text, ''), routes,
	pushed_at, push_error, seen_at, acted_at, created_at FROM core.owner_notifications`

func scan(row pgx.Row) (Row, error) {
	var r Row
	err := row.Scan(&r.ID, &r.Key, &r.Kind, &r.Urgency, &r.Title, &r.Body, &r.Link, &r.ConversationID, &r.Routes,
		&r.PushedAt, &r.PushError, &r.SeenAt, &r.ActedAt, &r.CreatedAt)
	return r, err
}

func get(ctx context.Context, q eventlog.Querier, key string) (Row, error) {
	r, err := scan(q.QueryRow(ctx, selectRow+` WHERE key = $1`, key))
	if err != nil {
		return r, fmt.Errorf("read notification %s: %w", key, err)
	}
	return r, nil
}

// List returns the latest notifications on the dashboard's route, newest first (at most
// limit, default 50): what arrived, seen or not.
func List(ctx context.Context, q eventlog.Querier, limit int) ([]Row, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	rows, err := q.Query(ctx, selectRow+` WHERE $1 = ANY (routes) ORDER BY created_at DESC, id DESC LIMIT $2`, RouteDashboard, limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Row, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	return out, nil
}

// ErrNotFound is a notification that does not exist.
var ErrNotFound = errors.New("no such notification")

// Seen records that the owner saw notification id (the first time only).
func Seen(ctx context.Context, pool *pgxpool.Pool, id int64) error {
	tag, err := pool.Exec(ctx, `UPDATE core.owner_notifications SET seen_at = COALESCE(seen_at, now()) WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("mark notification %d seen: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("notification %d: %w", id, ErrNotFound)
	}
	return nil
}
