package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/permission"
	"buddi/core/seal"
)

// DefaultMode is the execution mode of an agent the owner never set one for: auto, in which
// seed 002's engine adds nothing to the tools' own tiers (an auto tool runs, a gated one asks
// on a card), so an agent behaves as it did before modes were kept. The owner lowers it per
// agent to accept-edits or plan.
const DefaultMode = permission.ModeAuto

// purposeAgentMode is the seal's purpose of a core.agent_modes row.
const purposeAgentMode = "core.agent_mode" // agent, mode, updated at, updated by

// ErrNoModeKey is a mode set without the installation's key: nothing is written that buddi
// could not check when it reads it.
var ErrNoModeKey = errors.New("executor: no seal key: an agent's mode cannot be sealed")

// ErrBadMode is a mode that is not plan, accept-edits or auto.
var ErrBadMode = errors.New("the mode must be plan, accept-edits or auto")

// AgentMode is one agent's execution mode as the owner set it.
type AgentMode struct {
	// Agent is the agent's id.
	Agent string `json:"agent"`
	// Mode is the mode its calls are decided in: the one on record, DefaultMode when there
	// is none, plan when the record is refused.
	Mode permission.Mode `json:"mode"`
	// Set reports whether the owner chose it (false: the default).
	Set bool `json:"set"`
	// UpdatedAt is when the owner set it; zero for the default.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// UpdatedBy is where the owner set it: "owner:terminal", "owner:dashboard", "owner:telegram".
	UpdatedBy string `json:"updated_by,omitempty"`
	// Refused says why the record on file is not honoured ("" when it is): buddi did not
	// seal it, so the agent is in plan mode until the owner sets the mode again.
	Refused string `json:"refused,omitempty"`
}

// Modes reads and writes the agents' execution modes (core.agent_modes). It keeps nothing
// in memory: every read is one query by primary key, so a change applies to the next call
// of every run, in every process. A Modes is safe for concurrent use.
type Modes struct {
	pool *pgxpool.Pool
	key  seal.Key
	// Log receives a line for each refused record; nil logs none.
	Log *slog.Logger

	refused seal.Refusals
}

// NewModes returns the modes' store over pool, sealing and checking rows with key.
func NewModes(pool *pgxpool.Pool, key seal.Key) *Modes {
	return &Modes{pool: pool, key: key}
}

// modeSeal seals one row.
func (m *Modes) modeSeal(agent string, mode permission.Mode, at time.Time, by string) string {
	return m.key.Seal(purposeAgentMode, agent, string(mode), seal.Stamp(at), by)
}

// Mode returns agent's mode, read from the database now.
func (m *Modes) Mode(ctx context.Context, agent string) (AgentMode, error) {
	if m == nil || m.pool == nil {
		return AgentMode{}, errors.New("executor: the agents' modes have no database")
	}
	row := m.pool.QueryRow(ctx, `SELECT agent, mode, updated_at, updated_by, seal FROM core.agent_modes WHERE agent = $1`, agent)
	got, err := m.scan(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return AgentMode{Agent: agent, Mode: DefaultMode}, nil
	}
	if err != nil {
		return AgentMode{}, fmt.Errorf("read the mode of %s: %w", agent, err)
	}
	return got, nil
}

// scan reads one row and checks its seal: a row buddi did not seal is plan.
func (m *Modes) scan(row pgx.Row) (AgentMode, error) {
	var a AgentMode
	var mode, sum string
	if err := row.Scan(&a.Agent, &mode, &a.UpdatedAt, &a.UpdatedBy, &sum); err != nil {
		return AgentMode{}, err
	}
	a.Mode, a.Set = permission.Mode(mode), true
	if why := m.key.Why(sum, purposeAgentMode, a.Agent, mode, seal.Stamp(a.UpdatedAt), a.UpdatedBy); why != "" || !a.Mode.Valid() {
		if why == "" {
			why = fmt.Sprintf("%q is not a mode", mode)
		}
		a.Mode, a.Refused = permission.ModePlan, why
		if m.refused.First(a.Agent+"\x00"+sum) && m.Log != nil {
			m.Log.Warn("an agent's mode is refused and read as plan: "+why+"; set it again with `buddi agents mode`",
				"service", "executor", "agent", a.Agent)
		}
	}
	return a, nil
}

// All returns every mode on record, by agent; an agent missing from it is in DefaultMode.
func (m *Modes) All(ctx context.Context) (map[string]AgentMode, error) {
	if m == nil || m.pool == nil {
		return nil, errors.New("executor: the agents' modes have no database")
	}
	rows, err := m.pool.Query(ctx, `SELECT agent, mode, updated_at, updated_by, seal FROM core.agent_modes ORDER BY agent`)
	if err != nil {
		return nil, fmt.Errorf("read the agents' modes: %w", err)
	}
	defer rows.Close()
	out := map[string]AgentMode{}
	for rows.Next() {
		a, err := m.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("read the agents' modes: %w", err)
		}
		out[a.Agent] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the agents' modes: %w", err)
	}
	return out, nil
}

// SetMode records agent's mode, sealed, as set by by ("owner:<surface>"). Only the owner's
// surfaces call it; no tool does. It applies to the agent's next call.
func (m *Modes) SetMode(ctx context.Context, agent string, mode permission.Mode, by string) (AgentMode, error) {
	if m == nil || m.pool == nil {
		return AgentMode{}, errors.New("executor: the agents' modes have no database")
	}
	if !mode.Valid() {
		return AgentMode{}, fmt.Errorf("%w, not %q", ErrBadMode, mode)
	}
	if agent == "" {
		return AgentMode{}, errors.New("executor: a mode needs an agent")
	}
	if m.key.IsZero() {
		return AgentMode{}, ErrNoModeKey
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	_, err := m.pool.Exec(ctx, `INSERT INTO core.agent_modes (agent, mode, updated_at, updated_by, seal) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (agent) DO UPDATE SET mode = EXCLUDED.mode, updated_at = EXCLUDED.updated_at,
			updated_by = EXCLUDED.updated_by, seal = EXCLUDED.seal`,
		agent, string(mode), at, by, m.modeSeal(agent, mode, at, by))
	if err != nil {
		return AgentMode{}, fmt.Errorf("set the mode of %s: %w", agent, err)
	}
	return AgentMode{Agent: agent, Mode: mode, Set: true, UpdatedAt: at, UpdatedBy: by}, nil
}

// ModeNote is the end of a mode block's sentence for agent (its id) in mode: which mode it
// is in and how the owner changes it. clamped, when set, names the remote surface whose
// ceiling lowered the owner's mode.
func ModeNote(agent string, mode permission.Mode, clamped string) string {
	how := fmt.Sprintf("the owner changes it with `buddi agents mode %s accept-edits` (or auto) or on %s's card in Settings → Agents", agent, agent)
	if clamped != "" {
		return fmt.Sprintf("calls from %s run at most in %s mode (remote_max_mode in settings.json), whatever %s's own mode", clamped, mode, agent)
	}
	return fmt.Sprintf("%s is in %s mode, and %s", agent, mode, how)
}
