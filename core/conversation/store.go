package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/redact"
	"buddi/internal/text"
)

// MaxChars is the size at which a conversation ends when the owner next writes: 80,000
// characters of transcript.
const MaxChars = 80_000

// Kind is the kind of a transcript entry.
type Kind string

// The kinds of transcript entries.
const (
	KindUser      Kind = "user"       // the owner's message: {"text"}
	KindAssistant Kind = "assistant"  // the model's message: {"parts":[…]}
	KindTool      Kind = "tool"       // one answer to one call: {"call_id","tool","content","is_error"}
	KindOwnerAdds Kind = "owner-adds" // input that joined a working run between steps: {"text"}
	KindMarker    Kind = "marker"     // the turn above failed and was not answered: {"text"}
)

// Conversation is one conversation's row.
type Conversation struct {
	ID             string     `json:"id"`                     // a UUID
	Agent          string     `json:"agent"`                  // the agent's id
	Surface        string     `json:"surface"`                // where it began: terminal, dashboard, telegram
	CreatedAt      time.Time  `json:"created_at"`             // when it began
	LastActivityAt time.Time  `json:"last_activity_at"`       // the owner's latest message
	Chars          int64      `json:"chars"`                  // the size of its transcript
	ActiveRun      string     `json:"active_run,omitempty"`   // the run in flight (working or suspended), if any
	EndedAt        *time.Time `json:"ended_at,omitempty"`     // when it ended, if it did
	EndedReason    string     `json:"ended_reason,omitempty"` // idle, size, new
}

// Entry is one transcript entry.
type Entry struct {
	ID        int64           `json:"id"`               // increasing in transcript order
	RunID     string          `json:"run_id,omitempty"` // the run that wrote it; empty for the owner's messages
	Kind      Kind            `json:"kind"`             // what it is
	Body      json.RawMessage `json:"body"`             // its JSON, by kind
	CreatedAt time.Time       `json:"created_at"`       // when it was written
}

// Errors callers tell apart.
var (
	ErrNotFound = errors.New("no such conversation")
)

// Store reads and writes conversations.
type Store struct {
	pool *pgxpool.Pool
	// Scrub, when set, takes stored secrets out of what the owner writes before it is
	// written (messages, input that waits for a run, taken offers, a mission's prompt), as
	// the model gets it; and out of the transcript as it is read, so a secret stored after a
	// message was written is not served either.
	Scrub redact.Scrubber
}

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// owner returns what the owner wrote as it may be stored: scrubbed, and with nothing
// PostgreSQL refuses (a NUL becomes U+FFFD).
func (s *Store) owner(text string) string {
	if s.Scrub != nil {
		text = s.Scrub.String(text)
	}
	return redact.Storable(text)
}

const selectConversation = `SELECT id::text, agent, surface, created_at, last_activity_at, chars,
	COALESCE(active_run::text, ''), ended_at, ended_reason FROM core.conversations`

func scanConversation(row pgx.Row) (Conversation, error) {
	var c Conversation
	err := row.Scan(&c.ID, &c.Agent, &c.Surface, &c.CreatedAt, &c.LastActivityAt, &c.Chars, &c.ActiveRun, &c.EndedAt, &c.EndedReason)
	return c, err
}

// Get returns the conversation id.
func (s *Store) Get(ctx context.Context, id string) (Conversation, error) {
	return get(ctx, s.pool, id, false)
}

func get(ctx context.Context, q eventlog.Querier, id string, lock bool) (Conversation, error) {
	if !text.ValidUUID(id) {
		return Conversation{}, fmt.Errorf("conversation %q: %w", id, ErrNotFound)
	}
	sql := selectConversation + ` WHERE id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	c, err := scanConversation(q.QueryRow(ctx, sql, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("conversation %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("read conversation %s: %w", id, err)
	}
	return c, nil
}

// List returns the latest conversations, newest first; agent "" lists every agent's.
func (s *Store) List(ctx context.Context, agent string, limit int) ([]Conversation, error) {
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.pool.Query(ctx, selectConversation+` WHERE ($1 = '' OR agent = $1) ORDER BY last_activity_at DESC, created_at DESC LIMIT $2`, agent, limit)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Conversation, error) { return scanConversation(r) })
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	return out, nil
}

// Transcript returns the conversation's entries in order, scrubbed.
func (s *Store) Transcript(ctx context.Context, id string) ([]Entry, error) {
	return s.transcript(ctx, s.pool, id)
}

func (s *Store) transcript(ctx context.Context, q eventlog.Querier, id string) ([]Entry, error) {
	es, err := Transcript(ctx, q, id)
	if err != nil || s.Scrub == nil {
		return es, err
	}
	r := s.Scrub.Current()
	for i := range es {
		es[i].Body = r.JSON(es[i].Body)
	}
	return es, nil
}

// Transcript returns the conversation's entries in order, read through q.
func Transcript(ctx context.Context, q eventlog.Querier, id string) ([]Entry, error) {
	rows, err := q.Query(ctx, `SELECT id, COALESCE(run_id::text, ''), kind, body, created_at FROM core.messages
		WHERE conversation_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read the transcript of %s: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := r.Scan(&e.ID, &e.RunID, &e.Kind, &e.Body, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the transcript of %s: %w", id, err)
	}
	return out, nil
}

// Append adds an entry to the transcript through q (a transaction, usually) and counts its
// characters toward the conversation's size. A tool answer for a call already answered is
// refused by the database (one answer per call). A NUL in the body (a tool's binary output,
// a model's text) is stored as U+FFFD: jsonb refuses it.
func Append(ctx context.Context, q Querier, conversationID, runID string, kind Kind, body any) (int64, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("append to %s: %w", conversationID, err)
	}
	b = redact.StorableJSON(b)
	// The entry and the conversation's size in one statement (one round trip).
	var id int64
	err = q.QueryRow(ctx, `WITH m AS (INSERT INTO core.messages (conversation_id, run_id, kind, body)
		VALUES ($1, NULLIF($2, '')::uuid, $3, $4) RETURNING id)
		UPDATE core.conversations SET chars = chars + $5 WHERE id = $1 RETURNING (SELECT id FROM m)`,
		conversationID, runID, kind, b, len(b)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("append a %s entry to %s: %w", kind, conversationID, err)
	}
	return id, nil
}

// Querier is a pgx.Tx, *pgx.Conn or *pgxpool.Pool.
type Querier interface {
	eventlog.Querier
	// Exec runs sql with args.
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}
