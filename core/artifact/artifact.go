// Package artifact is core's store of files the owner sees (screenshots, documents): a row
// in core.artifacts and the bytes in <data>/artifacts/<id>, written atomically with mode
// 0600. Core owns it, so removing a plugin never takes the owner's files.
package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
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
}

// ErrNotFound means no artifact has that id.
var ErrNotFound = errors.New("artifact: not found")

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

// Save writes data and records it; a describes it (ID, Bytes, SHA256 and CreatedAt are
// filled in).
func (s *Store) Save(ctx context.Context, a Artifact, data []byte) (Artifact, error) {
	if len(data) > MaxBytes {
		return a, fmt.Errorf("artifact %s: %d bytes is over the %d limit", a.Name, len(data), MaxBytes)
	}
	sum := sha256.Sum256(data)
	a.SHA256, a.Bytes = hex.EncodeToString(sum[:]), int64(len(data))
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return a, fmt.Errorf("artifact store %s: %w", s.dir, err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO core.artifacts (agent, conversation_id, run_id, name, media_type, bytes, sha256, source)
			VALUES ($1, NULLIF($2, '')::uuid, $3, $4, $5, $6, $7, $8) RETURNING id::text, created_at`,
			a.Agent, a.ConversationID, a.RunID, a.Name, a.MediaType, a.Bytes, a.SHA256, a.Source).Scan(&a.ID, &a.CreatedAt); err != nil {
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

// Open returns the artifact id and its bytes.
func (s *Store) Open(ctx context.Context, id string) (Artifact, []byte, error) {
	var a Artifact
	if !text.ValidUUID(id) {
		return a, nil, ErrNotFound
	}
	err := s.pool.QueryRow(ctx, `SELECT id::text, agent, COALESCE(conversation_id::text, ''), run_id, name, media_type, bytes, sha256, source, created_at
		FROM core.artifacts WHERE id = $1`, id).Scan(&a.ID, &a.Agent, &a.ConversationID, &a.RunID, &a.Name, &a.MediaType, &a.Bytes, &a.SHA256, &a.Source, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, nil, ErrNotFound
	}
	if err != nil {
		return a, nil, fmt.Errorf("read artifact %s: %w", id, err)
	}
	data, err := os.ReadFile(filepath.Join(s.dir, a.ID))
	if err != nil {
		return a, nil, fmt.Errorf("read artifact %s: %w", id, err)
	}
	return a, data, nil
}
