// Package artifact is core's store of files the owner sees (screenshots, documents): a row
// in core.artifacts and the bytes in <data>/artifacts/<id>, written atomically with mode
// 0600. Core owns it, so removing a plugin never takes the owner's files.
//
// A row is one version, and a version never changes (its digest is kept and checked when it
// is opened; the database refuses an update of its content columns). A new version is a new
// row in the same lineage, numbered one past the latest and naming the version it follows:
// reading by id gives that exact version, and [Store.Latest] the newest of a lineage. An
// approval that references an id therefore references exactly what ships.
package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/internal/text"
)

// Artifact describes one stored file.
type Artifact struct {
	ID             string    `json:"id"`                        // a UUID
	Agent          string    `json:"agent"`                     // the agent whose run made it
	ConversationID string    `json:"conversation_id,omitempty"` // where it was made
	RunID          string    `json:"run_id,omitempty"`          // the run that made it
	Name           string    `json:"name"`                      // a file name for the owner
	MediaType      string    `json:"media_type"`                // image/png, …
	Bytes          int64     `json:"bytes"`                     // its size
	SHA256         string    `json:"sha256"`                    // its digest
	Source         string    `json:"source,omitempty"`          // what made it
	CreatedAt      time.Time `json:"created_at"`                // when
	Lineage        string    `json:"lineage"`                   // the id of its first version
	Version        int       `json:"version"`                   // 1 for the first, one more for each after
	// Previous is the version this one follows: empty for a first version. Set it on Save
	// to write a new version of Previous's lineage; Previous must be its latest.
	Previous string `json:"previous,omitempty"`
	// Versions is how many versions its lineage has, counted by List; 0 elsewhere.
	Versions int `json:"versions,omitempty"`
}

// ErrNotFound means no artifact has that id.
var ErrNotFound = errors.New("artifact: not found")

// NotLatestError refuses a new version of a version that is not its lineage's latest: the
// writer read an older version, so writing over it would lose what came since.
type NotLatestError struct {
	Previous string // the version the writer named
	Latest   string // the lineage's latest version's id
	Version  int    // and its number
}

// Error says which version is the latest, for the writer to read and write over.
func (e *NotLatestError) Error() string {
	if e.Latest == "" {
		return fmt.Sprintf("artifact %s: another version was written at the same moment; read the latest and write again", e.Previous)
	}
	return fmt.Sprintf("artifact %s is not the latest version: version %d (%s) is, so read it and write the new version over that one", e.Previous, e.Version, e.Latest)
}

// MaxBytes bounds one artifact.
const MaxBytes = 32 << 20

// Store saves and opens artifacts.
type Store struct {
	pool *pgxpool.Pool
	dir  string
}

// NewStore returns the store over pool, with files in <dataDir>/artifacts.
func NewStore(pool *pgxpool.Pool, dataDir string) *Store {
	return &Store{pool: pool, dir: filepath.Join(dataDir, "artifacts")}
}

// Save writes data and records it; a describes it (ID, Lineage, Version, Bytes, SHA256 and
// CreatedAt are filled in). With a.Previous set, it is a new version of that artifact's
// lineage: Previous must exist (else an error matching ErrNotFound) and be the latest (else a
// *NotLatestError); an empty Name or MediaType is taken from it. Who may write a version is
// the caller's rule.
func (s *Store) Save(ctx context.Context, a Artifact, data []byte) (Artifact, error) {
	if len(data) > MaxBytes {
		return a, fmt.Errorf("artifact %s: %d bytes is over the %d limit", a.Name, len(data), MaxBytes)
	}
	sum := sha256.Sum256(data)
	a.SHA256, a.Bytes = hex.EncodeToString(sum[:]), int64(len(data))
	a.Versions = 0
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return a, fmt.Errorf("artifact store %s: %w", s.dir, err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var lineage *string
		a.Version = 1
		if a.Previous != "" {
			prev, err := s.follow(ctx, tx, a.Previous)
			if err != nil {
				return err
			}
			lineage, a.Version = &prev.Lineage, prev.Version+1
			if a.Name == "" {
				a.Name = prev.Name
			}
			if a.MediaType == "" {
				a.MediaType = prev.MediaType
			}
		}
		if err := tx.QueryRow(ctx, `INSERT INTO core.artifacts (agent, conversation_id, run_id, name, media_type, bytes, sha256, source, lineage, version, previous)
			VALUES ($1, NULLIF($2, '')::uuid, $3, $4, $5, $6, $7, $8, $9::uuid, $10, NULLIF($11, '')::uuid) RETURNING id::text, lineage::text, created_at`,
			a.Agent, a.ConversationID, a.RunID, a.Name, a.MediaType, a.Bytes, a.SHA256, a.Source, lineage, a.Version, a.Previous).Scan(&a.ID, &a.Lineage, &a.CreatedAt); err != nil {
			if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == "23505" {
				return &NotLatestError{Previous: a.Previous}
			}
			return fmt.Errorf("record artifact %s: %w", a.Name, err)
		}
		// The file is in place before the row commits: a row never names a missing file.
		tmp, err := os.CreateTemp(s.dir, ".tmp-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		if _, err := tmp.Write(data); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Chmod(0o600); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), filepath.Join(s.dir, a.ID))
	})
	return a, err
}

// follow locks the version a new one follows and checks it is its lineage's latest.
func (s *Store) follow(ctx context.Context, tx pgx.Tx, prevID string) (Artifact, error) {
	if !text.ValidUUID(prevID) {
		return Artifact{}, fmt.Errorf("no artifact %s to write a new version of: %w", prevID, ErrNotFound)
	}
	prev, err := scanOne(tx.QueryRow(ctx, `SELECT `+columns+` FROM core.artifacts WHERE id = $1 FOR UPDATE`, prevID))
	if errors.Is(err, ErrNotFound) {
		return prev, fmt.Errorf("no artifact %s to write a new version of: %w", prevID, ErrNotFound)
	}
	if err != nil {
		return prev, err
	}
	var latest string
	var version int
	if err := tx.QueryRow(ctx, `SELECT id::text, version FROM core.artifacts WHERE lineage = $1 ORDER BY version DESC LIMIT 1`, prev.Lineage).Scan(&latest, &version); err != nil {
		return prev, fmt.Errorf("read the latest version of artifact %s: %w", prevID, err)
	}
	if latest != prev.ID {
		return prev, &NotLatestError{Previous: prev.ID, Latest: latest, Version: version}
	}
	return prev, nil
}

// columns are an Artifact's columns, in scan's order.
const columns = `id::text, agent, COALESCE(conversation_id::text, ''), run_id, name, media_type, bytes, sha256, source, created_at, lineage::text, version, COALESCE(previous::text, '')`

// scan reads the columns into an Artifact; extra are scanned after them.
func scan(row pgx.Row, extra ...any) (Artifact, error) {
	var a Artifact
	dest := append([]any{&a.ID, &a.Agent, &a.ConversationID, &a.RunID, &a.Name, &a.MediaType, &a.Bytes, &a.SHA256, &a.Source, &a.CreatedAt, &a.Lineage, &a.Version, &a.Previous}, extra...)
	return a, row.Scan(dest...)
}

// scanOne reads one row; no row is ErrNotFound.
func scanOne(row pgx.Row) (Artifact, error) {
	a, err := scan(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("read artifact: %w", err)
	}
	return a, nil
}

// Textual reports whether mediaType names text: text/*, JSON, XML, YAML, JavaScript, TOML,
// SQL, or a +json, +xml or +yaml type.
func Textual(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml", "application/javascript", "application/toml", "application/sql":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+yaml")
}

// Get returns the version id's description, without its bytes.
func (s *Store) Get(ctx context.Context, id string) (Artifact, error) {
	if !text.ValidUUID(id) {
		return Artifact{}, ErrNotFound
	}
	return scanOne(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM core.artifacts WHERE id = $1`, id))
}

// Latest returns the latest version of the lineage that version id belongs to.
func (s *Store) Latest(ctx context.Context, id string) (Artifact, error) {
	if !text.ValidUUID(id) {
		return Artifact{}, ErrNotFound
	}
	return scanOne(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM core.artifacts
		WHERE lineage = (SELECT lineage FROM core.artifacts WHERE id = $1) ORDER BY version DESC LIMIT 1`, id))
}

// Versions lists every version of the lineage that version id belongs to, the first first;
// none is ErrNotFound.
func (s *Store) Versions(ctx context.Context, id string) ([]Artifact, error) {
	if !text.ValidUUID(id) {
		return nil, ErrNotFound
	}
	rows, err := s.pool.Query(ctx, `SELECT `+columns+` FROM core.artifacts
		WHERE lineage = (SELECT lineage FROM core.artifacts WHERE id = $1) ORDER BY version`, id)
	if err != nil {
		return nil, fmt.Errorf("list the versions of artifact %s: %w", id, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Artifact, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("list the versions of artifact %s: %w", id, err)
	}
	if len(list) == 0 {
		return nil, ErrNotFound
	}
	return list, nil
}

// Filter chooses what List returns.
type Filter struct {
	// Agent, when set, keeps the versions Agent made, and those ConversationID keeps.
	// Agent and ConversationID both empty keep every version.
	Agent string
	// ConversationID, when set, keeps the versions made in that conversation, and those
	// Agent keeps: either one suffices.
	ConversationID string
	// Name keeps the lineages whose latest kept version's name contains it, ignoring case.
	Name string
	// Limit bounds the list: default [MaxList], at most MaxList+1 (a caller that shows
	// MaxList asks for one more to know there are more).
	Limit int
}

// MaxList is the most a List gives by default.
const MaxList = 200

// List returns, for each lineage with a version f keeps, the latest version f keeps, with
// Versions counting the versions f keeps; the newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Artifact, error) {
	switch {
	case f.Limit <= 0:
		f.Limit = MaxList
	case f.Limit > MaxList+1:
		f.Limit = MaxList + 1
	}
	conv := f.ConversationID
	if conv != "" && !text.ValidUUID(conv) {
		conv = "00000000-0000-0000-0000-000000000000" // no conversation has it
	}
	rows, err := s.pool.Query(ctx, `WITH kept AS (
			SELECT * FROM core.artifacts
			WHERE ($1 = '' AND $2 = '') OR ($1 <> '' AND agent = $1) OR ($2 <> '' AND conversation_id = NULLIF($2, '')::uuid)
		), latest AS (
			SELECT DISTINCT ON (lineage) *, count(*) OVER (PARTITION BY lineage) AS versions
			FROM kept ORDER BY lineage, version DESC
		)
		SELECT `+columns+`, versions FROM latest
		WHERE strpos(lower(name), lower($3)) > 0
		ORDER BY created_at DESC, id LIMIT $4`, f.Agent, conv, f.Name, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Artifact, error) {
		var n int64
		a, err := scan(r, &n)
		a.Versions = int(n)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	return list, nil
}

// Open returns the version id and its bytes. Bytes that no longer match the recorded digest
// are an error: a version never changes.
func (s *Store) Open(ctx context.Context, id string) (Artifact, []byte, error) {
	a, err := s.Get(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return a, nil, ErrNotFound
		}
		return a, nil, fmt.Errorf("read artifact %s: %w", id, err)
	}
	data, err := os.ReadFile(filepath.Join(s.dir, a.ID))
	if err != nil {
		return a, nil, fmt.Errorf("read artifact %s: %w", id, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != a.SHA256 {
		return a, nil, fmt.Errorf("artifact %s: its file no longer matches its recorded digest, so it is not served (restore it from a backup)", id)
	}
	return a, data, nil
}
