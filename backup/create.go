package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"buddi/version"
)

// FormatVersion is the archive layout this buddi writes and reads.
const FormatVersion = 1

// SecretsNote is the manifest's word on what is not in an archive.
const SecretsNote = "no secrets: the vault, its key and seal.key stay where they are, and plugins.json keeps its env lines' names only (set their values again with buddi plugins add); without the original seal.key sealed rows (sessions, paired phones, standing permissions, decisions) no longer check"

// Manifest describes an archive; it is its last member.
type Manifest struct {
	// Format is FormatVersion at the time of writing.
	Format int `json:"format"`
	// BuddiVersion is the version of the buddi that wrote the archive.
	BuddiVersion string `json:"buddi_version"`
	// PGMajor is the PostgreSQL major version of the server dumped; a restore needs at least it.
	PGMajor int `json:"pg_major"`
	// PGVersion is that server's full version.
	PGVersion string `json:"pg_version"`
	// CreatedAt is when the dump's snapshot was taken, UTC.
	CreatedAt time.Time `json:"created_at"`
	// Schemas are the schemas dumped: core, river and each plugin's.
	Schemas []string `json:"schemas"`
	// Extensions are the extensions the database had (pg_trgm): a restore creates them
	// before the dump is loaded. Absent in archives written before buddi had any.
	Extensions []Extension `json:"extensions,omitempty"`
	// Rows counts the rows of every table in the dump, by "schema.table".
	Rows map[string]int64 `json:"rows"`
	// Members lists every other member of the archive with its size and SHA-256.
	Members []Member `json:"members"`
	// Secrets says what is deliberately not in the archive (SecretsNote).
	Secrets string `json:"secrets"`
}

// Member is one file of an archive.
type Member struct {
	Name   string `json:"name"`   // its path in the archive, with slashes
	Size   int64  `json:"size"`   // its length in bytes
	SHA256 string `json:"sha256"` // the hex SHA-256 of its bytes
}

// Files are where the owner's files live. Members are named by where they came from:
// artifacts/…, agents/…, skills/…, plugins.json, timezone.
type Files struct {
	// Home is the data directory (BUDDI_HOME): artifacts/, plugins.json and timezone are in it.
	Home string
	// AgentsDir and SkillsDir are the owner's agent and skill files (agents.OwnerDirs).
	AgentsDir, SkillsDir string
}

// homeFiles are the single files of the data directory an archive holds.
var homeFiles = []string{"plugins.json", "timezone"}

// CreateOptions tune Create.
type CreateOptions struct {
	// To is the archive's path; it is written beside it first and renamed into place, 0600.
	To string
	// Passphrase, when set, encrypts the archive with age (scrypt).
	Passphrase string
	// Progress hears a line before each long step; nil: silence.
	Progress func(string)
}

// Result says what Create wrote.
type Result struct {
	Path     string        `json:"path"`     // the archive
	Size     int64         `json:"size"`     // its length in bytes
	Took     time.Duration `json:"took_ns"`  // how long it took
	Manifest Manifest      `json:"manifest"` // its manifest
}

// Create writes an archive of db and files to opts.To.
func Create(ctx context.Context, db Database, files Files, opts CreateOptions) (*Result, error) {
	start := time.Now()
	say := opts.Progress
	if say == nil {
		say = func(string) {}
	}
	if opts.To == "" {
		return nil, errors.New("backup: no destination given")
	}
	if err := os.MkdirAll(filepath.Dir(opts.To), 0o700); err != nil {
		return nil, fmt.Errorf("create the backup's directory: %w", err)
	}
	work, err := os.MkdirTemp(filepath.Dir(opts.To), ".backup-")
	if err != nil {
		return nil, fmt.Errorf("create the backup's work directory: %w", err)
	}
	defer os.RemoveAll(work)
	say("dumping the database (one consistent snapshot)")
	dumpFile := filepath.Join(work, DumpName)
	info, err := db.dump(ctx, dumpFile)
	if err != nil {
		return nil, err
	}
	partial := filepath.Join(work, "archive.partial")
	out, err := os.OpenFile(partial, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create the backup file: %w", err)
	}
	defer out.Close()
	aw, err := newArchiveWriter(out, opts.Passphrase)
	if err != nil {
		return nil, err
	}
	say("writing the archive")
	if err := aw.addFile(DumpName, dumpFile); err != nil {
		return nil, err
	}
	if err := aw.addTree("artifacts", filepath.Join(files.Home, "artifacts")); err != nil {
		return nil, err
	}
	for _, d := range []struct{ prefix, dir string }{{"agents", files.AgentsDir}, {"skills", files.SkillsDir}} {
		if d.dir == "" {
			continue
		}
		if err := aw.addTree(d.prefix, d.dir); err != nil {
			return nil, err
		}
	}
	for _, name := range homeFiles {
		p := filepath.Join(files.Home, name)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if name == "plugins.json" { // its env lines may hold a plugin's keys: names only
			if err := addPluginsRecord(aw, p); err != nil {
				return nil, err
			}
			continue
		}
		if err := aw.addFile(name, p); err != nil {
			return nil, err
		}
	}
	man := &Manifest{Format: FormatVersion, BuddiVersion: version.Version, PGMajor: info.pgMajor, PGVersion: info.pgVersion,
		CreatedAt: start.UTC().Truncate(time.Second), Schemas: info.schemas, Extensions: info.extensions, Rows: info.rows, Secrets: SecretsNote}
	if err := aw.finish(man); err != nil {
		return nil, err
	}
	if err := out.Sync(); err != nil {
		return nil, fmt.Errorf("write the backup file: %w", err)
	}
	if err := out.Close(); err != nil {
		return nil, fmt.Errorf("write the backup file: %w", err)
	}
	if err := os.Rename(partial, opts.To); err != nil {
		return nil, fmt.Errorf("put the backup in place: %w", err)
	}
	fi, err := os.Stat(opts.To)
	if err != nil {
		return nil, fmt.Errorf("read the backup file: %w", err)
	}
	return &Result{Path: opts.To, Size: fi.Size(), Took: time.Since(start), Manifest: *man}, nil
}

// DefaultName is an archive's file name for a backup taken at t.
func DefaultName(t time.Time, encrypted bool) string {
	name := "buddi-" + t.UTC().Format("20060102-150405") + ".tar.gz"
	if encrypted {
		name += ".age"
	}
	return name
}

// Dir is where scheduled backups (and, by default, buddi backup create) are kept: <home>/backups.
func Dir(home string) string { return filepath.Join(home, "backups") }

// Prune removes the oldest archives named by DefaultName in dir until keep remain, and
// returns the paths removed. Other files in dir are left alone.
func Prune(dir string, keep int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the backups: %w", err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasPrefix(n, "buddi-") && (strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".tar.gz.age")) {
			names = append(names, n)
		}
	}
	sort.Strings(names) // the stamp sorts by time
	var removed []string
	for len(names) > keep {
		p := filepath.Join(dir, names[0])
		if err := os.Remove(p); err != nil {
			return removed, fmt.Errorf("remove an old backup: %w", err)
		}
		removed = append(removed, p)
		names = names[1:]
	}
	return removed, nil
}

// addPluginsRecord adds plugins.json with every env line's value taken out ("KEY=" stays, so
// the owner sees which to set again): a plugin's API key is often one of them, and a secret
// is never in an archive. A record that is not JSON is left out rather than copied whole.
func addPluginsRecord(aw *archiveWriter, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s for the backup: %w", path, err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil
	}
	stripEnvValues(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("write plugins.json into the backup: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("read %s for the backup: %w", path, err)
	}
	return aw.add("plugins.json", int64(len(out)), fi.ModTime(), bytes.NewReader(out))
}

// stripEnvValues replaces each "KEY=VALUE" of every "env" list in v with "KEY=".
func stripEnvValues(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if list, ok := child.([]any); ok && k == "env" {
				for i, line := range list {
					if s, ok := line.(string); ok {
						key, _, _ := strings.Cut(s, "=")
						list[i] = key + "="
					} else {
						list[i] = ""
					}
				}
				continue
			}
			stripEnvValues(child)
		}
	case []any:
		for _, child := range x {
			stripEnvValues(child)
		}
	}
}
