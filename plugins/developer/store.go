package developer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

// ErrNotRemembered is Forget's answer for an id that names no standing remembered command.
var ErrNotRemembered = errors.New("developer: no such remembered command")

// DefaultMode is the mode of an agent the owner never chose one for (§3: "The default").
const DefaultMode = runlist.ModeRun

// Store reads and writes the developer schema: workspaces, modes and remembered commands.
// Every query names its schema. A Store is safe for concurrent use.
//
// What decides what runs without a card (a workspace with the PATH and git captured with it,
// a mode, a remembered command, the tailnet switch) is sealed with the installation's key
// when the owner's path writes it, and checked where it is read: a record whose seal does not
// check is refused (a workspace, a remembered command: absent; a mode: ask; the switch: off),
// recorded once as developer.forged, and logged.
type Store struct {
	pool *pgxpool.Pool
	key  seal.Key
	now  func() time.Time
	// Log receives a line for each refused record; nil logs none (the event is recorded).
	Log *slog.Logger

	refused seal.Refusals // the refused records reported already
}

// NewStore returns a Store over pool, sealing and checking with key (the zero key refuses
// every record and writes none); now is its clock (nil: time.Now).
func NewStore(pool *pgxpool.Pool, key seal.Key, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{pool: pool, key: key, now: now}
}

// The seals' purposes, one per kind of record.
const (
	purposeWorkspace  = "developer.workspace"  // agent, directory, set at, set by, PATH, git
	purposeMode       = "developer.mode"       // agent, mode, updated at
	purposeRemembered = "developer.remembered" // id, agent, workspace, argv, prefix, created at
	purposeTailnet    = "developer.tailnet"    // on or off, updated at
)

// ErrNoKey is a write through a Store without the installation's key: nothing is recorded
// that buddi could not check later.
var ErrNoKey = errors.New("developer: no seal key: the owner's records cannot be sealed")

// stamp is the clock's now as a sealed record keeps it.
func (s *Store) stamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// refuse records a record that is not buddi's own, once per process: a developer.forged event
// and a log line, each with what the owner does about it.
func (s *Store) refuse(ctx context.Context, row, id, why, fix string) {
	if !s.refused.First(row + "\x00" + id + "\x00" + why) {
		return
	}
	if s.Log != nil {
		s.Log.Warn("a developer record is refused: "+why+"; "+fix, "service", "developer", "row", row, "id", id)
	}
	if _, err := eventlog.Append(ctx, s.pool, events.DeveloperForged, "", events.DeveloperForgedPayload{Row: row, ID: id, Reason: why, Fix: fix}); err != nil && s.Log != nil {
		s.Log.Warn("record a refused developer record", "service", "developer", "err", err)
	}
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
	// Refused says why the record is not honoured ("" when buddi sealed it): the agent has
	// no workspace until the owner sets it again.
	Refused string `json:"refused,omitempty"`
}

// fields are what the workspace's seal covers: every field that decides where and with what the
// agent's commands run.
func (w Workspace) fields() []string {
	return []string{w.Agent, w.Directory, seal.Stamp(w.SetAt), w.SetBy, w.Path, w.Git}
}

// fixWorkspace says what the owner does about a refused workspace.
func fixWorkspace(agent string) string {
	return fmt.Sprintf("set it again with `buddi developer workspace set --agent %s DIR`, or approve the agent's developer.workspace card", agent)
}

// scanWorkspace reads a workspace row and checks its seal.
func (s *Store) scanWorkspace(ctx context.Context, row pgx.Row) (Workspace, error) {
	var w Workspace
	var sum string
	if err := row.Scan(&w.Agent, &w.Directory, &w.SetAt, &w.SetBy, &w.Path, &w.Git, &sum); err != nil {
		return w, err
	}
	if w.Refused = s.key.Why(sum, purposeWorkspace, w.fields()...); w.Refused != "" {
		s.refuse(ctx, "workspace", w.Agent, w.Refused, fixWorkspace(w.Agent))
	}
	return w, nil
}

const selectWorkspace = `SELECT agent, directory, set_at, set_by, path, git, seal FROM developer.workspaces`

// Workspace returns agent's workspace; ok is false when it has none, or when its record is
// refused (w.Refused says why).
func (s *Store) Workspace(ctx context.Context, agent string) (w Workspace, ok bool, err error) {
	if s == nil || s.pool == nil {
		return w, false, errNoDatabase
	}
	w, err = s.scanWorkspace(ctx, s.pool.QueryRow(ctx, selectWorkspace+` WHERE agent = $1`, agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return Workspace{}, false, nil
	}
	if err != nil {
		return Workspace{}, false, fmt.Errorf("developer: read the workspace of %q: %w", agent, err)
	}
	return w, w.Refused == "", nil
}

// Workspaces lists every agent's workspace record, by agent, for the Settings page and the
// CLI; a refused one has Refused set.
func (s *Store) Workspaces(ctx context.Context) ([]Workspace, error) {
	if s == nil || s.pool == nil {
		return nil, errNoDatabase
	}
	rows, err := s.pool.Query(ctx, selectWorkspace+` ORDER BY agent`)
	if err != nil {
		return nil, fmt.Errorf("developer: list workspaces: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Workspace, error) {
		return s.scanWorkspace(ctx, r)
	})
	if err != nil {
		return nil, fmt.Errorf("developer: list workspaces: %w", err)
	}
	return out, nil
}

// SetWorkspace records dir as agent's one workspace, replacing any other, with the PATH its
// commands resolve on (path; "" for the plugin's own) and the git binary found on it (§11),
// sealed. dir must be absolute and clean; SetWorkspace checks nothing on disk, so a caller
// first validates the directory with [Deps.Root] (protected paths, a real directory) and
// passes Root.Dir. setBy is "approval" or "owner:<surface>". An agent with no mode on record
// gets DefaultMode recorded with it: an agent with a workspace always has one, so a mode
// removed from the database reads as ask, never as the default.
func (s *Store) SetWorkspace(ctx context.Context, agent, dir, setBy, path string) (Workspace, error) {
	if s == nil || s.pool == nil {
		return Workspace{}, errNoDatabase
	}
	if s.key.IsZero() {
		return Workspace{}, ErrNoKey
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
	w := Workspace{Agent: agent, Directory: dir, SetAt: s.stamp(), SetBy: setBy, Path: path}
	if path != "" {
		if git, err := spawn.Resolve("git", path); err == nil {
			w.Git = git
		}
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			INSERT INTO developer.workspaces (agent, directory, set_at, set_by, path, git, seal) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (agent) DO UPDATE SET directory = EXCLUDED.directory, set_at = EXCLUDED.set_at, set_by = EXCLUDED.set_by,
				path = EXCLUDED.path, git = EXCLUDED.git, seal = EXCLUDED.seal`,
			w.Agent, w.Directory, w.SetAt, w.SetBy, w.Path, w.Git, s.key.Seal(purposeWorkspace, w.fields()...)); err != nil {
			return err
		}
		at := s.stamp()
		_, err := tx.Exec(ctx, `INSERT INTO developer.settings (agent, mode, updated_at, seal) VALUES ($1, $2, $3, $4)
			ON CONFLICT (agent) DO NOTHING`, agent, string(DefaultMode), at, s.modeSeal(agent, DefaultMode, at))
		return err
	})
	if err != nil {
		return Workspace{}, fmt.Errorf("developer: set the workspace of %q: %w", agent, err)
	}
	return w, nil
}

// modeSeal seals agent's mode as set at at.
func (s *Store) modeSeal(agent string, mode runlist.Mode, at time.Time) string {
	return s.key.Seal(purposeMode, agent, string(mode), seal.Stamp(at))
}

// Mode returns agent's mode, read from the record on every call (§3: "changing it … changes
// the next call and not the run"); DefaultMode when the owner never set one and the agent has
// no workspace. A mode record buddi did not seal, or one missing beside a workspace, is ask.
func (s *Store) Mode(ctx context.Context, agent string) (runlist.Mode, error) {
	m, _, err := s.ReadMode(ctx, agent)
	return m, err
}

// ReadMode is Mode, with why the record on file is not honoured ("" when it is, or when
// there is none to honour).
func (s *Store) ReadMode(ctx context.Context, agent string) (mode runlist.Mode, refused string, err error) {
	if s == nil || s.pool == nil {
		return "", "", errNoDatabase
	}
	fix := fmt.Sprintf("set it again with `buddi developer mode --agent %s MODE` or on Settings → Developer; until then it is ask", agent)
	var stored, sum string
	var at time.Time
	err = s.pool.QueryRow(ctx, `SELECT mode, updated_at, seal FROM developer.settings WHERE agent = $1`, agent).Scan(&stored, &at, &sum)
	if errors.Is(err, pgx.ErrNoRows) {
		// No mode on record. A workspace is always set with one, so beside a workspace a
		// missing mode was removed from the database: ask, not the default.
		_, ok, err := s.Workspace(ctx, agent)
		if err != nil {
			return "", "", err
		}
		if !ok {
			return DefaultMode, "", nil
		}
		why := "its mode is missing from the database"
		s.refuse(ctx, "mode", agent, why, fix)
		return runlist.ModeAsk, why, nil
	}
	if err != nil {
		return "", "", fmt.Errorf("developer: read the mode of %q: %w", agent, err)
	}
	if why := s.key.Why(sum, purposeMode, agent, stored, seal.Stamp(at)); why != "" {
		s.refuse(ctx, "mode", agent, why, fix)
		return runlist.ModeAsk, why, nil
	}
	mode, err = runlist.ParseMode(stored)
	return mode, "", err
}

// SetMode sets agent's mode, sealed. Only the owner sets the mode (§3: "changed by the owner
// … never by the agent"): the owner's surfaces (Settings → Developer, `buddi developer mode`)
// call this, and no tool of this plugin does.
func (s *Store) SetMode(ctx context.Context, agent string, mode runlist.Mode) error {
	if s == nil || s.pool == nil {
		return errNoDatabase
	}
	if s.key.IsZero() {
		return ErrNoKey
	}
	if agent == "" {
		return errors.New("developer: a mode needs an agent")
	}
	if _, err := runlist.ParseMode(string(mode)); err != nil {
		return err
	}
	at := s.stamp()
	_, err := s.pool.Exec(ctx, `
		INSERT INTO developer.settings (agent, mode, updated_at, seal) VALUES ($1, $2, $3, $4)
		ON CONFLICT (agent) DO UPDATE SET mode = EXCLUDED.mode, updated_at = EXCLUDED.updated_at, seal = EXCLUDED.seal`,
		agent, string(mode), at, s.modeSeal(agent, mode, at))
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
	// Refused says why the record is not honoured ("" when buddi sealed it): the command
	// asks again.
	Refused string `json:"refused,omitempty"`
}

// fields are what a remembered command's seal covers: its id and everything it allows.
func (c RememberedCommand) fields() ([]string, error) {
	argv, err := json.Marshal(c.Argv)
	if err != nil {
		return nil, err
	}
	return []string{strconv.FormatInt(c.ID, 10), c.Agent, c.Workspace, string(argv), strconv.FormatBool(c.Prefix), seal.Stamp(c.CreatedAt)}, nil
}

// fixRemembered says what the owner does about a refused remembered command.
const fixRemembered = "the command asks again on its next card; forget the record with `buddi developer allowed forget ID`"

// Remember records r, sealed. Saying the same thing twice keeps one row and returns it; a row
// of the same command that buddi did not seal is revoked and replaced. r.Argv must not be
// empty and r.Workspace must be absolute; a workspace moved elsewhere starts with nothing
// remembered, because r is bound to the directory.
func (s *Store) Remember(ctx context.Context, r runlist.Remembered) (RememberedCommand, error) {
	if s == nil || s.pool == nil {
		return RememberedCommand{}, errNoDatabase
	}
	if s.key.IsZero() {
		return RememberedCommand{}, ErrNoKey
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
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var sum string
		err := tx.QueryRow(ctx, `
			SELECT id, created_at, seal FROM developer.remembered_commands
			WHERE agent = $1 AND workspace = $2 AND argv = $3 AND prefix = $4 AND revoked_at IS NULL FOR UPDATE`,
			r.Agent, r.Workspace, argv, r.Prefix).Scan(&out.ID, &out.CreatedAt, &sum)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			fields, err := out.fields()
			if err != nil {
				return err
			}
			if s.key.Check(sum, purposeRemembered, fields...) {
				return nil // said before
			}
			// The standing row is not buddi's: it goes, and the owner's answer takes its place.
			if _, err := tx.Exec(ctx, `UPDATE developer.remembered_commands SET revoked_at = GREATEST(created_at, $2) WHERE id = $1`,
				out.ID, s.stamp()); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `
			INSERT INTO developer.remembered_commands (agent, workspace, argv, prefix, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id, created_at`,
			r.Agent, r.Workspace, argv, r.Prefix, s.stamp()).Scan(&out.ID, &out.CreatedAt); err != nil {
			return err
		}
		fields, err := out.fields()
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE developer.remembered_commands SET seal = $2 WHERE id = $1`, out.ID, s.key.Seal(purposeRemembered, fields...))
		return err
	})
	if err != nil {
		return RememberedCommand{}, fmt.Errorf("developer: remember %q: %w", r.Argv, err)
	}
	return out, nil
}

// ListRemembered lists the standing remembered commands of agent, or of every agent when
// agent is "", oldest first: "Commands you allowed" on Settings → Developer. A record buddi
// did not seal is listed with Refused set; it allows nothing.
func (s *Store) ListRemembered(ctx context.Context, agent string) ([]RememberedCommand, error) {
	if s == nil || s.pool == nil {
		return nil, errNoDatabase
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, agent, workspace, argv, prefix, created_at, seal FROM developer.remembered_commands
		WHERE revoked_at IS NULL AND ($1 = '' OR agent = $1)
		ORDER BY id`, agent)
	if err != nil {
		return nil, fmt.Errorf("developer: list remembered commands: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RememberedCommand, error) {
		var (
			c    RememberedCommand
			argv []byte
			sum  string
		)
		if err := row.Scan(&c.ID, &c.Agent, &c.Workspace, &argv, &c.Prefix, &c.CreatedAt, &sum); err != nil {
			return c, err
		}
		if err := json.Unmarshal(argv, &c.Argv); err != nil {
			c.Refused = "its command cannot be read"
		} else if fields, err := c.fields(); err != nil {
			c.Refused = "its command cannot be read"
		} else {
			c.Refused = s.key.Why(sum, purposeRemembered, fields...)
		}
		if c.Refused != "" {
			s.refuse(ctx, "remembered command", strconv.FormatInt(c.ID, 10), c.Refused, fixRemembered)
		}
		return c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("developer: list remembered commands: %w", err)
	}
	return out, nil
}

// RememberedFor returns what the run tool matches a command against: the standing
// remembered commands of agent in workspace that buddi sealed.
func (s *Store) RememberedFor(ctx context.Context, agent, workspace string) ([]runlist.Remembered, error) {
	all, err := s.ListRemembered(ctx, agent)
	if err != nil {
		return nil, err
	}
	var out []runlist.Remembered
	for _, c := range all {
		if c.Refused == "" && c.Agent == agent && filepath.Clean(c.Workspace) == filepath.Clean(workspace) {
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
// when never set, and when the record is not one buddi sealed.
func (s *Store) TailnetPreviews(ctx context.Context) (bool, error) {
	if s == nil || s.pool == nil {
		return false, errNoDatabase
	}
	var on bool
	var at time.Time
	var sum string
	err := s.pool.QueryRow(ctx, `SELECT previews, updated_at, seal FROM developer.tailnet`).Scan(&on, &at, &sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("developer: read the tailnet switch: %w", err)
	}
	if why := s.key.Why(sum, purposeTailnet, strconv.FormatBool(on), seal.Stamp(at)); why != "" {
		s.refuse(ctx, "tailnet switch", "", why, "turn it on again with `buddi tailnet previews on` or on Settings → Developer; until then it is off")
		return false, nil
	}
	return on, nil
}

// TailnetChannel is the notification channel a change of the tailnet switch is announced on.
const TailnetChannel = "buddi_developer_tailnet"

// SetTailnetPreviews sets the Tailscale switch, sealed, and announces it on TailnetChannel.
// Only the owner's surfaces call it (the dashboard's Settings → Developer and `buddi tailnet
// previews`); no tool does.
func (s *Store) SetTailnetPreviews(ctx context.Context, on bool) error {
	if s == nil || s.pool == nil {
		return errNoDatabase
	}
	if s.key.IsZero() {
		return ErrNoKey
	}
	at := s.stamp()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO developer.tailnet (id, previews, updated_at, seal) VALUES (true, $1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET previews = EXCLUDED.previews, updated_at = EXCLUDED.updated_at, seal = EXCLUDED.seal`,
			on, at, s.key.Seal(purposeTailnet, strconv.FormatBool(on), seal.Stamp(at))); err != nil {
			return err
		}
		// A running buddi follows the switch (its tailnet ports) when this commits.
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, TailnetChannel, strconv.FormatBool(on))
		return err
	})
	if err != nil {
		return fmt.Errorf("developer: set the tailnet switch: %w", err)
	}
	return nil
}
