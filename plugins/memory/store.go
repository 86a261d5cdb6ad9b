package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/internal/readable"
)

// The bounds of what is kept and asked, in bytes (counts for MaxRecall).
const (
	MaxNote      = 4096 // a note's text
	MaxQuery     = 200  // a recall's query
	MaxKey       = 100  // a preference's key
	MaxValue     = 1000 // a preference's value
	MaxRecall    = 20   // notes one recall returns
	DefaultLimit = 5    // notes a recall returns when the call names no limit
	MaxDays      = 3650 // the longest expiry, in days
)

// Owner is the author and deleter the store records for the owner's own changes.
const Owner = "owner"

// The scopes of a note.
const (
	ScopePrivate = "private" // recalled by its agent only
	ScopeShared  = "shared"  // recalled by every agent; published explicitly
)

// similarity is the least pg_trgm word similarity at which a keyword finds a note.
const similarity = "0.5"

// Errors the store returns for a request that cannot be done, each a sentence for the model
// or the owner ([Invalid] reports them).
var (
	ErrNoNote    = invalid("memory: there is no such note of yours to forget: memory.recall lists your notes with their ids")
	ErrForgotten = invalid("memory: that note was already forgotten")
)

// invalidError is a request the store refuses as asked: the caller's to change, not a fault.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }

func invalid(format string, args ...any) error { return &invalidError{fmt.Sprintf(format, args...)} }

// Invalid reports whether err refuses the request as asked (too long, empty, not the
// caller's note), so the caller is told rather than the call failing.
func Invalid(err error) bool {
	_, ok := errors.AsType[*invalidError](err)
	return ok
}

// Note is one note with its provenance.
type Note struct {
	ID             int64      `json:"id"`                        // the note's id, which memory.forget names
	Agent          string     `json:"agent"`                     // who wrote it
	Text           string     `json:"text"`                      // what it says
	Scope          string     `json:"scope"`                     // private or shared
	ConversationID string     `json:"conversation_id,omitempty"` // the conversation it was written in
	RunID          string     `json:"run_id,omitempty"`          // the run that wrote it
	CreatedAt      time.Time  `json:"created_at"`                // when it was written
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`      // never recalled after
	DeletedAt      *time.Time `json:"deleted_at,omitempty"`      // forgotten: kept, never recalled
	DeletedBy      string     `json:"deleted_by,omitempty"`      // "owner" or the agent
}

// NewNote is a note to keep.
type NewNote struct {
	Agent          string     // the agent writing it
	Text           string     // what it says, at most MaxNote bytes
	Scope          string     // "" is private
	ConversationID string     // the conversation it is written in
	RunID          string     // the run writing it
	At             time.Time  // when
	ExpiresAt      *time.Time // when it lapses; nil keeps it
}

// Preference is one revision of a preference.
type Preference struct {
	ID             int64      `json:"id"`                        // the revision's id
	Key            string     `json:"key"`                       // what it is about, lower case
	Value          string     `json:"value"`                     // what the owner prefers
	Revision       int        `json:"revision"`                  // 1, then one more per correction
	Author         string     `json:"author"`                    // "owner" or the agent that proposed it
	ConversationID string     `json:"conversation_id,omitempty"` // where an agent proposed it
	RunID          string     `json:"run_id,omitempty"`          // the run that proposed it
	CreatedAt      time.Time  `json:"created_at"`                // when this revision was written
	SupersededAt   *time.Time `json:"superseded_at,omitempty"`   // set when the next revision was written
	SupersededBy   *int64     `json:"superseded_by,omitempty"`   // that revision's id
}

// NewPreference is a statement of a preference: a first one, or a correction.
type NewPreference struct {
	Key            string    // what it is about
	Value          string    // what the owner prefers
	Author         string    // "owner" or the agent
	ConversationID string    // where an agent proposes it
	RunID          string    // the run proposing it
	At             time.Time // when
}

// Store reads and writes the memory schema.
type Store struct {
	pool *pgxpool.Pool

	mu   sync.Mutex
	trgm string // the quoted schema pg_trgm lives in, once looked up
}

// NewStore returns the store over pool, whose database has the memory schema.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// CleanText trims text and checks it is text at all, within max bytes, with no character a
// reader cannot see (readable.Hidden); what names the field in the error.
func CleanText(what, text string, max int) (string, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return "", invalid("memory: the %s is empty: write what is to be kept", what)
	case !utf8.ValidString(text) || strings.ContainsRune(text, 0):
		return "", invalid("memory: the %s is not valid text (UTF-8 without NUL bytes)", what)
	case len(text) > max:
		return "", invalid("memory: the %s is %d bytes, more than the %d kept: make it shorter", what, len(text), max)
	}
	rs := []rune(text)
	for i := range rs {
		if readable.Hidden(rs, i) { // what is kept is read by the owner, and by later runs
			return "", invalid("memory: the %s has a character no reader can see (%U) in it: leave it out, since the owner reads what is kept", what, rs[i])
		}
	}
	return text, nil
}

// CleanKey is a preference's key as kept: trimmed, lower case, single spaces.
func CleanKey(key string) (string, error) {
	key, err := CleanText("preference's key", key, MaxKey)
	if err != nil {
		return "", err
	}
	// Lowered, a letter may take more bytes than it did (Ⱥ is two, ⱥ three): the bound is
	// the kept key's.
	return CleanText("preference's key", strings.Join(strings.Fields(strings.ToLower(key)), " "), MaxKey)
}

// Remember keeps a note and returns it.
func (s *Store) Remember(ctx context.Context, n NewNote) (Note, error) {
	text, err := CleanText("note", n.Text, MaxNote)
	if err != nil {
		return Note{}, err
	}
	scope := n.Scope
	if scope == "" {
		scope = ScopePrivate
	}
	if scope != ScopePrivate && scope != ScopeShared {
		return Note{}, invalid("memory: the scope %q is neither private nor shared", scope)
	}
	if n.Agent == "" {
		return Note{}, errors.New("memory: a note needs the agent that writes it")
	}
	if n.ExpiresAt != nil && !n.ExpiresAt.After(n.At) {
		return Note{}, invalid("memory: the note's expiry is not in the future")
	}
	var out Note
	row := s.pool.QueryRow(ctx, `INSERT INTO memory.notes (agent, body, folded, scope, conversation_id, run_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+noteColumns,
		n.Agent, text, fold(text), scope, n.ConversationID, n.RunID, n.At, n.ExpiresAt)
	if err := scanNote(row, &out); err != nil {
		return Note{}, fmt.Errorf("memory: keep the note: %w", err)
	}
	return out, nil
}

// noteColumns are what scanNote reads, in order.
const noteColumns = `id, agent, body, scope, conversation_id, run_id, created_at, expires_at, deleted_at, coalesce(deleted_by, '')`

func scanNote(row pgx.Row, n *Note) error {
	return row.Scan(&n.ID, &n.Agent, &n.Text, &n.Scope, &n.ConversationID, &n.RunID, &n.CreatedAt, &n.ExpiresAt, &n.DeletedAt, &n.DeletedBy)
}

// Recalled is a note a recall found, with how well it matched.
type Recalled struct {
	Note
	Score float64 `json:"score"` // higher is closer: full-text rank plus the best keyword's similarity
}

// Recall finds up to limit notes agent may recall for query at now: its own private notes
// and the shared ones, neither expired nor deleted, best first. A note is found by the
// full-text search of the query (websearch syntax: "a phrase", -excluded, or), by the
// trigram similarity of any of its keywords, or, for a keyword in a script other than
// Latin, by containing it (the database's locale may not know its letters, and Chinese puts
// no spaces between words). Case is ignored in every script: the search runs over the
// note's text lowered by [fold]. A note with an excluded word or phrase is never found.
func (s *Store) Recall(ctx context.Context, agent, query string, limit int, now time.Time) ([]Recalled, error) {
	query, err := CleanText("query", query, MaxQuery)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxRecall)
	trgm, err := s.trgmSchema(ctx)
	if err != nil {
		return nil, err
	}
	folded := fold(query)
	terms := parseQuery(folded)
	var out []Recalled
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('pg_trgm.word_similarity_threshold', $1, true)", similarity); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `WITH q AS (SELECT websearch_to_tsquery('english', $2) AS tsq),
			words AS (SELECT w FROM unnest($5::text[]) w WHERE length(to_tsvector('english', w)) > 0),
			parts AS (SELECT p FROM unnest($6::text[]) p),
			excluded AS (SELECT phraseto_tsquery('english', x) AS x FROM unnest($7::text[]) x)
		SELECT `+noteColumns+`,
			(search @@ q.tsq)::int + ts_rank_cd(search, q.tsq)
			+ coalesce((SELECT max(`+trgm+`.word_similarity(w, folded)) FROM words), 0)
			+ (EXISTS (SELECT 1 FROM parts WHERE strpos(folded, p) > 0))::int * 0.5 AS score
		FROM memory.notes, q
		WHERE deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
		  AND (agent = $1 OR scope = 'shared')
		  AND (search @@ q.tsq OR EXISTS (SELECT 1 FROM words WHERE w OPERATOR(`+trgm+`.<%) folded)
		       OR EXISTS (SELECT 1 FROM parts WHERE strpos(folded, p) > 0))
		  AND NOT EXISTS (SELECT 1 FROM excluded WHERE numnode(x) > 0 AND search @@ x)
		ORDER BY score DESC, created_at DESC, id DESC
		LIMIT $4`, agent, folded, now, limit, terms.keywords, terms.parts, terms.excluded)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Recalled, error) {
			var r Recalled
			err := row.Scan(&r.ID, &r.Agent, &r.Text, &r.Scope, &r.ConversationID, &r.RunID, &r.CreatedAt, &r.ExpiresAt, &r.DeletedAt, &r.DeletedBy, &r.Score)
			return r, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("memory: recall: %w", err)
	}
	return out, nil
}

// fold is text as recall searches it: Unicode's lower case, the same whatever the
// database's locale.
func fold(text string) string { return strings.ToLower(text) }

// terms are what a query looks for besides its full-text search.
type terms struct {
	keywords []string // matched by trigram similarity
	parts    []string // matched as a part of the text: keywords in a script other than Latin
	excluded []string // words and phrases whose notes are never found
}

// parseQuery splits a folded query the way websearch_to_tsquery reads it: a word or a
// "quoted phrase" led by - is excluded; the other words are keywords, those of three
// letters or more, each once, at most ten (a keyword written in Han, kana or Hangul counts
// from two). A keyword with a letter outside Latin is also looked for as a part of the text.
func parseQuery(query string) terms {
	t := terms{keywords: []string{}, parts: []string{}, excluded: []string{}}
	seen := map[string]bool{}
	for _, tok := range tokens(query) {
		neg := strings.HasPrefix(tok, "-")
		tok = strings.Trim(strings.TrimLeft(tok, "-"), `"`)
		if neg {
			if strings.TrimSpace(tok) != "" {
				t.excluded = append(t.excluded, tok)
			}
			continue
		}
		for _, w := range strings.FieldsFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if seen[w] || len(t.keywords) == 10 {
				continue
			}
			n, min := utf8.RuneCountInString(w), 3
			if strings.IndexFunc(w, func(r rune) bool {
				return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
			}) >= 0 {
				min = 2
			}
			if n < min {
				continue
			}
			seen[w] = true
			t.keywords = append(t.keywords, w)
			if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r) }) >= 0 {
				t.parts = append(t.parts, w)
			}
		}
	}
	return t
}

// tokens splits query at spaces outside double quotes, keeping the quotes: `-"a b" c` is
// `-"a b"` and `c`.
func tokens(query string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range query {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case unicode.IsSpace(r) && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// trgmSchema is the quoted name of the schema pg_trgm's functions and operators are in.
func (s *Store) trgmSchema(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trgm != "" {
		return s.trgm, nil
	}
	var name string
	err := s.pool.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'pg_trgm'`).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errors.New("memory: the database has no pg_trgm extension: run buddi's migrations (buddi migrate)")
	}
	if err != nil {
		return "", fmt.Errorf("memory: find pg_trgm: %w", err)
	}
	s.trgm = pgx.Identifier{name}.Sanitize()
	return s.trgm, nil
}

// Forget marks note id deleted by by at now. With agent set, only that agent's note is
// forgotten (ErrNoNote otherwise); the owner passes "". The row stays for the audit.
func (s *Store) Forget(ctx context.Context, id int64, agent, by string, now time.Time) (Note, error) {
	var out Note
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var n Note
		if err := scanNote(tx.QueryRow(ctx, `SELECT `+noteColumns+` FROM memory.notes WHERE id = $1 FOR UPDATE`, id), &n); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNoNote
			}
			return err
		}
		if agent != "" && n.Agent != agent {
			return ErrNoNote
		}
		if n.DeletedAt != nil {
			return ErrForgotten
		}
		return scanNote(tx.QueryRow(ctx, `UPDATE memory.notes SET deleted_at = $2, deleted_by = $3 WHERE id = $1 RETURNING `+noteColumns, id, now, by), &out)
	})
	if errors.Is(err, ErrNoNote) || errors.Is(err, ErrForgotten) {
		return Note{}, err
	}
	if err != nil {
		return Note{}, fmt.Errorf("memory: forget note %d: %w", id, err)
	}
	return out, nil
}

// Notes lists the notes for the owner, newest first: agent's (every agent's when ""),
// expired and deleted ones included, at most limit.
func (s *Store) Notes(ctx context.Context, agent string, limit int) ([]Note, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+noteColumns+` FROM memory.notes
		WHERE $1 = '' OR agent = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, agent, limit)
	if err != nil {
		return nil, fmt.Errorf("memory: read the notes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Note, error) {
		var n Note
		return n, scanNote(row, &n)
	})
	if err != nil {
		return nil, fmt.Errorf("memory: read the notes: %w", err)
	}
	return out, nil
}

// Prefer states a preference: the first revision of its key, or a correction that supersedes
// the current one, which it returns as previous. Stating the current value again writes
// nothing and returns the current revision with a nil previous.
func (s *Store) Prefer(ctx context.Context, p NewPreference) (pref Preference, previous *Preference, err error) {
	key, err := CleanKey(p.Key)
	if err != nil {
		return Preference{}, nil, err
	}
	value, err := CleanText("preference's value", p.Value, MaxValue)
	if err != nil {
		return Preference{}, nil, err
	}
	if p.Author == "" {
		return Preference{}, nil, errors.New("memory: a preference needs its author")
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One writer per key at a time: the revisions of a key are a line, never a fork.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('memory.preferences ' || $1, 0))", key); err != nil {
			return err
		}
		var cur Preference
		err := scanPreference(tx.QueryRow(ctx, `SELECT `+preferenceColumns+` FROM memory.preferences
			WHERE key = $1 AND superseded_at IS NULL`, key), &cur)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case cur.Value == value:
			pref = cur
			return nil
		default:
			previous = &cur
		}
		revision := 1
		var id int64
		if err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('memory.preferences', 'id'))`).Scan(&id); err != nil {
			return err
		}
		if previous != nil {
			revision = previous.Revision + 1
			// The new revision's id is known before its row: the reference is checked at commit.
			if _, err := tx.Exec(ctx, `UPDATE memory.preferences SET superseded_at = $2, superseded_by = $3 WHERE id = $1`,
				previous.ID, p.At, id); err != nil {
				return err
			}
		}
		if err := scanPreference(tx.QueryRow(ctx, `INSERT INTO memory.preferences
			(id, key, value, revision, author, conversation_id, run_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+preferenceColumns,
			id, key, value, revision, p.Author, p.ConversationID, p.RunID, p.At), &pref); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return Preference{}, nil, fmt.Errorf("memory: keep the preference %q: %w", key, err)
	}
	return pref, previous, nil
}

// preferenceColumns are what scanPreference reads, in order.
const preferenceColumns = `id, key, value, revision, author, conversation_id, run_id, created_at, superseded_at, superseded_by`

func scanPreference(row pgx.Row, p *Preference) error {
	return row.Scan(&p.ID, &p.Key, &p.Value, &p.Revision, &p.Author, &p.ConversationID, &p.RunID, &p.CreatedAt, &p.SupersededAt, &p.SupersededBy)
}

// Preferences lists the current revision of every preference, by key.
func (s *Store) Preferences(ctx context.Context) ([]Preference, error) {
	return s.preferences(ctx, `SELECT `+preferenceColumns+` FROM memory.preferences WHERE superseded_at IS NULL ORDER BY key`)
}

// History lists every revision of every preference, by key, newest revision first.
func (s *Store) History(ctx context.Context) ([]Preference, error) {
	return s.preferences(ctx, `SELECT `+preferenceColumns+` FROM memory.preferences ORDER BY key, revision DESC`)
}

func (s *Store) preferences(ctx context.Context, sql string) ([]Preference, error) {
	rows, err := s.pool.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("memory: read the preferences: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Preference, error) {
		var p Preference
		return p, scanPreference(row, &p)
	})
	if err != nil {
		return nil, fmt.Errorf("memory: read the preferences: %w", err)
	}
	return out, nil
}
