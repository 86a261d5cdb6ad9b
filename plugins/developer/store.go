package developer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

// ErrNotRemembered is Forget's answer for an id that names no standing remembered command.
var ErrNotRemembered = errors.New("developer: no such remembered command")

// DefaultMode is the mode of an agent the owner never chose one for (§3: "The default").
const DefaultMode = runlist.ModeRun

// Store reads and writes the developer schema: workspaces, modes and remembered commands.
// Every query names its schema. A Store is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewStore returns a Store over pool; now is its clock (nil: time.Now).
func NewStore(pool *pgxpool.Pool, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{pool: pool, now: now}
}

// Workspace is one agent's workspace record (§2).
type Workspace struct {
	// Agent owns the workspace.
	Agent string `json:"agent"`
	// Directory is absolute, with the links in its path resolved when it was set.
	Directory string `json:"directory"`
	// SetAt is when it was set.
	SetAt time.Time `json:"set_at"`
	// SetBy says who set it: "approval" or "owner:<surface>".
	SetBy string `json:"set_by"`
	// Path is the PATH captured when it was set: commands run in it are resolved on it (§11).
	Path string `json:"path"`
	// Git is the git binary found on Path then, or empty.
	Git string `json:"git"`
}

// CaptureEnvironment records the PATH commands of agent's workspace are resolved on, and the
// git binary found on it (§11), as they are when the workspace is set.
func (s *Store) CaptureEnvironment(ctx context.Context, agent, path string) error {
	if s == nil || s.pool == nil {
		return errNoDatabase
	}
	git, err := spawn.Resolve("git", path)
	if err != nil {
		git = ""
	}
	if _, err := s.pool.Exec(ctx, `UPDATE developer.workspaces SET path = $2, git = $3 WHERE agent = $1`, agent, path, git); err != nil {
		return fmt.Errorf("developer: capture the environment of %q: %w", agent, err)
	}
	return nil
}

// Workspace returns agent's workspace; ok is false when it has none.
func (s *Store) Workspace(ctx context.Context, agent string) (w Workspace, ok bool, err error) {
	if s == nil || s.pool == nil {
		return w, false, errNoDatabase
	}
	err = s.pool.QueryRow(ctx,
		`SELECT agent, directory, set_at, set_by, path, git FROM developer.workspaces WHERE agent = $1`, agent).
		Scan(&w.Agent, &w.Directory, &w.SetAt, &w.SetBy, &w.Path, &w.Git)
	if errors.Is(err, pgx.ErrNoRows) {
		return Workspace{}, false, nil
	}
	if err != nil {
		return Workspace{}, false, fmt.Errorf("developer: read the workspace of %q: %w", agent, err)
	}
	return w, true, nil
}

// Workspaces lists every agent's workspace, by agent, for the Settings page and the CLI.
func (s *Store) Workspaces(ctx context.Context) ([]Workspace, error) {
	if s == nil || s.pool == nil {
		return nil, errNoDatabase
	}
	rows, err := s.pool.Query(ctx, `SELECT agent, directory, set_at, set_by, path, git FROM developer.workspaces ORDER BY agent`)
	if err != nil {
		return nil, fmt.Errorf("developer: list workspaces: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Workspace, error) {
		var w Workspace
		err := r.Scan(&w.Agent, &w.Directory, &w.SetAt, &w.SetBy, &w.Path, &w.Git)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("developer: list workspaces: %w", err)
	}
	return out, nil
}

// SetWorkspace records dir as agent's one workspace, replacing any other. dir must be
// absolute and clean; SetWorkspace checks nothing on disk, so a caller first validates the
// directory with [Deps.Root] (protected paths, a real directory) and passes Root.Dir.
// setBy is "approval" or "owner:<surface>".
func (s *Store) SetWorkspace(ctx context.Context, agent, dir, setBy string) (Workspace, error) {
	if s == nil || s.pool == nil {
		return Workspace{}, errNoDatabase
	}
	if agent == "" {
		return Workspace{}, errors.New("developer: a workspace needs an agent")
	}
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return Workspace{}, fmt.Errorf("developer: workspace %q is not a clean absolute path", dir)
	}
	if setBy == "" {
		return Workspace{}, errors.New("developer: say who sets the workspace")
	}
	w := Workspace{Agent: agent, Directory: dir, SetAt: s.now().UTC().Truncate(time.Microsecond), SetBy: setBy}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO developer.workspaces (agent, directory, set_at, set_by) VALUES ($1, $2, $3, $4)
		ON CONFLICT (agent) DO UPDATE SET directory = EXCLUDED.directory, set_at = EXCLUDED.set_at, set_by = EXCLUDED.set_by`,
		w.Agent, w.Directory, w.SetAt, w.SetBy)
	if err != nil {
		return Workspace{}, fmt.Errorf("developer: set the workspace of %q: %w", agent, err)
	}
	return w, nil
}

// Mode returns agent's mode, read from the record on every call (§3: "changing it … changes
// the next call and not the run"); DefaultMode when the owner never set one.
func (s *Store) Mode(ctx context.Context, agent string) (runlist.Mode, error) {
	if s == nil || s.pool == nil {
		return "", errNoDatabase
	}
	var mode string
	err := s.pool.QueryRow(ctx, `SELECT mode FROM developer.settings WHERE agent = $1`, agent).Scan(&mode)
	if errors.Is(err, pgx.ErrNoRows) {
		return DefaultMode, nil
	}
	if err != nil {
		return "", fmt.Errorf("developer: read the mode of %q: %w", agent, err)
	}
	return runlist.ParseMode(mode)
}

// SetMode sets agent's mode. Only the owner sets the mode (§3: "changed by the owner …
// never by the agent"): the owner's surfaces (Settings → Developer, `buddi developer mode`)
// call this, and no tool of this plugin does.
func (s *Store) SetMode(ctx context.Context, agent string, mode runlist.Mode) error {
	if s == nil || s.pool == nil {
		return errNoDatabase
	}
	if agent == "" {
		return errors.New("developer: a mode needs an agent")
	}
	if _, err := runlist.ParseMode(string(mode)); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO developer.settings (agent, mode, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (agent) DO UPDATE SET mode = EXCLUDED.mode, updated_at = EXCLUDED.updated_at`,
		agent, string(mode), s.now().UTC())
	if err != nil {
		return fmt.Errorf("developer: set the mode of %q: %w", agent, err)
	}
	return nil
}

// RememberedCommand is one standing "remember this, in this workspace" answer (§3, §8).
type RememberedCommand struct {
	// ID identifies it for Forget.
	ID int64 `json:"id"`
	runlist.Remembered
	// CreatedAt is when the owner said it.
	CreatedAt time.Time `json:"created_at"`
}

// Remember records r. Saying the same thing twice keeps one row and returns it. r.Argv
// must not be empty and r.Workspace must be absolute; a workspace moved elsewhere starts
// with nothing remembered, because r is bound to the directory.
func (s *Store) Remember(ctx context.Context, r runlist.Remembered) (RememberedCommand, error) {
	if s == nil || s.pool == nil {
		return RememberedCommand{}, errNoDatabase
	}
	if r.Agent == "" || len(r.Argv) == 0 || !filepath.IsAbs(r.Workspace) {
		return RememberedCommand{}, errors.New("developer: a remembered command needs an agent, an absolute workspace and an argv")
	}
	r.Workspace = filepath.Clean(r.Workspace)
	argv, err := json.Marshal(r.Argv)
	if err != nil {
		return RememberedCommand{}, fmt.Errorf("developer: remember %q: %w", r.Argv, err)
	}
	out := RememberedCommand{Remembered: r}
	// The no-op update makes RETURNING answer with the standing row on a repeat.
	err = s.pool.QueryRow(ctx, `
		INSERT INTO developer.remembered_commands (agent, workspace, argv, prefix, created_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (agent, workspace, argv, prefix) WHERE revoked_at IS NULL
		DO UPDATE SET agent = EXCLUDED.agent
		RETURNING id, created_at`,
		r.Agent, r.Workspace, argv, r.Prefix, s.now().UTC()).Scan(&out.ID, &out.CreatedAt)
	if err != nil {
		return RememberedCommand{}, fmt.Errorf("developer: remember %q: %w", r.Argv, err)
	}
	return out, nil
}

// ListRemembered lists the standing remembered commands of agent, or of every agent when
// agent is "", oldest first: "Commands you allowed" on Settings → Developer.
func (s *Store) ListRemembered(ctx context.Context, agent string) ([]RememberedCommand, error) {
	if s == nil || s.pool == nil {
		return nil, errNoDatabase
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, agent, workspace, argv, prefix, created_at FROM developer.remembered_commands
		WHERE revoked_at IS NULL AND ($1 = '' OR agent = $1)
		ORDER BY id`, agent)
	if err != nil {
		return nil, fmt.Errorf("developer: list remembered commands: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RememberedCommand, error) {
		var (
			c    RememberedCommand
			argv []byte
		)
		if err := row.Scan(&c.ID, &c.Agent, &c.Workspace, &argv, &c.Prefix, &c.CreatedAt); err != nil {
			return c, err
		}
		return c, json.Unmarshal(argv, &c.Argv)
	})
	if err != nil {
		return nil, fmt.Errorf("developer: list remembered commands: %w", err)
	}
	return out, nil
}

// RememberedFor returns what the run tool matches a command against: the standing
// remembered commands of agent in workspace.
func (s *Store) RememberedFor(ctx context.Context, agent, workspace string) ([]runlist.Remembered, error) {
	all, err := s.ListRemembered(ctx, agent)
	if err != nil {
		return nil, err
	}
	var out []runlist.Remembered
	for _, c := range all {
		if c.Agent == agent && filepath.Clean(c.Workspace) == filepath.Clean(workspace) {
			out = append(out, c.Remembered)
		}
	}
	return out, nil
}

// Forget revokes the remembered command id (developer.forget_command, owner-only). The row
// stays, with its revocation time; ErrNotRemembered when no standing command has that id.
func (s *Store) Forget(ctx context.Context, id int64) error {
	if s == nil || s.pool == nil {
		return errNoDatabase
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE developer.remembered_commands SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`,
		id, s.now().UTC())
	if err != nil {
		return fmt.Errorf("developer: forget remembered command %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("developer: forget remembered command %d: %w", id, ErrNotRemembered)
	}
	return nil
}

// errNoDatabase is every Store method's answer when the plugin was built without a pool.
var errNoDatabase = errors.New("developer: the plugin has no database")

// TailnetPreviews reports whether the owner turned on Settings → Developer's Tailscale switch
// (§12): each started process that listens on a port also gets that port on the tailnet. Off
// when never set.
func (s *Store) TailnetPreviews(ctx context.Context) (bool, error) {
	if s == nil || s.pool == nil {
		return false, errNoDatabase
	}
	var on bool
	err := s.pool.QueryRow(ctx, `SELECT previews FROM developer.tailnet`).Scan(&on)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("developer: read the tailnet switch: %w", err)
	}
	return on, nil
}

// SetTailnetPreviews sets the Tailscale switch. Only the owner's surfaces call it (the
// dashboard's Settings → Developer and `buddi tailnet previews`); no tool does.
func (s *Store) SetTailnetPreviews(ctx context.Context, on bool) error {
	if s == nil || s.pool == nil {
		return errNoDatabase
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO developer.tailnet (id, previews, updated_at) VALUES (true, $1, $2)
		ON CONFLICT (id) DO UPDATE SET previews = EXCLUDED.previews, updated_at = EXCLUDED.updated_at`, on, s.now().UTC())
	if err != nil {
		return fmt.Errorf("developer: set the tailnet switch: %w", err)
	}
	return nil
}
