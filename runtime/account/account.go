// Package account keeps the named provider accounts (seed 004, "Named provider accounts"):
// which wire, which credential kind, which base URL, and the name of the vault entry that
// holds the secret — never the secret itself — plus each agent's assignment of an account
// and a model. A disabled account stops the next call; there is no fallback across accounts.
//
// An account decides where the owner's key is sent, so each account and each assignment is
// sealed with the installation's key (core/seal) when the owner writes it, and checked
// whenever it is read: a row whose seal does not check (an earlier buddi's, or one written
// straight into the database) is treated as absent, recorded as account.forged and logged,
// and its key is never sent.
package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
	"buddi/core/vault"
	"buddi/runtime/provider"
)

// Account is one named provider account.
type Account struct {
	Name       string                  `json:"name"`        // lower-case, digits and dashes
	Wire       provider.Wire           `json:"wire"`        // anthropic or openai
	Kind       provider.CredentialKind `json:"kind"`        // api-key or subscription-token
	BaseURL    string                  `json:"base_url"`    // empty: the wire's default
	SecretName string                  `json:"secret_name"` // the vault entry with the secret
	Enabled    bool                    `json:"enabled"`     // a disabled account stops the next call
	CreatedAt  time.Time               `json:"created_at"`  // when it was added
	// Refused says why the row is not honoured ("" when buddi sealed it): such an account
	// is absent, and its key is never sent.
	Refused string `json:"refused,omitempty"`
}

// Assignment is the account and model an agent runs on.
type Assignment struct {
	Agent   string    `json:"agent"`   // the agent's id
	Account string    `json:"account"` // the account's name
	Model   string    `json:"model"`   // the model id on that account's wire
	SetAt   time.Time `json:"set_at"`  // when the owner set it
	// Refused says why the row is not honoured ("" when buddi sealed it): the agent has no
	// account until the owner sets it again.
	Refused string `json:"refused,omitempty"`
}

// Errors.
var (
	// ErrNotFound means no account (or assignment) has that name.
	ErrNotFound = errors.New("account: not found")
	// ErrExists means an account of that name exists already.
	ErrExists = errors.New("account: exists")
	// ErrInUse means agents still run on the account.
	ErrInUse = errors.New("account: in use")
	// ErrInvalid means the account's fields do not go together.
	ErrInvalid = errors.New("account: invalid")
	// ErrUnsealed means the account's row is not one buddi wrote (its seal does not check):
	// it is treated as absent, and the owner adds it again.
	ErrUnsealed = errors.New("account: not sealed by this buddi")
	// ErrNoKey means the store has no seal key, so it can write no account.
	ErrNoKey = errors.New("account: no seal key")
)

// The seals' purposes.
const (
	purposeAccount    = "account"            // name, wire, kind, base URL, secret name, enabled, created at
	purposeAssignment = "account.assignment" // agent, account, model, set at
)

// Fix is what the owner does about an account that is refused.
func Fix(name string) string {
	return fmt.Sprintf("add it again with `buddi accounts add %s --wire … --secret …` (check its base URL first)", name)
}

// FixAssignment is what the owner does about an assignment that is refused.
func FixAssignment(agent string) string {
	return fmt.Sprintf("set it again with `buddi agents set %s --account NAME --model MODEL`", agent)
}

// fields are what an account's seal covers: everything that decides where its key goes.
func (a Account) fields() []string {
	return []string{a.Name, string(a.Wire), string(a.Kind), a.BaseURL, a.SecretName, strconv.FormatBool(a.Enabled), seal.Stamp(a.CreatedAt)}
}

// fields are what an assignment's seal covers.
func (as Assignment) fields() []string {
	return []string{as.Agent, as.Account, as.Model, seal.Stamp(as.SetAt)}
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// Validate checks an account before it is stored.
func (a Account) Validate() error {
	switch {
	case !namePattern.MatchString(a.Name):
		return fmt.Errorf("account name %q: use lower-case letters, digits and dashes, starting with a letter: %w", a.Name, ErrInvalid)
	case a.Wire != provider.WireAnthropic && a.Wire != provider.WireOpenAI:
		return fmt.Errorf("wire %q: say anthropic or openai: %w", a.Wire, ErrInvalid)
	case a.Kind != provider.CredentialAPIKey && a.Kind != provider.CredentialSubscriptionToken:
		return fmt.Errorf("kind %q: say api-key or subscription-token: %w", a.Kind, ErrInvalid)
	case a.Wire == provider.WireOpenAI && a.Kind != provider.CredentialAPIKey:
		return fmt.Errorf("the openai wire takes an api-key only: %w", ErrInvalid)
	case a.Kind == provider.CredentialSubscriptionToken && a.BaseURL != "":
		return fmt.Errorf("a subscription token is sent only to the provider's own address, so it takes no --base-url: %w", ErrInvalid)
	}
	if err := vault.CheckName(a.SecretName); err != nil {
		return fmt.Errorf("secret name: %w: %w", err, ErrInvalid)
	}
	return nil
}

// Store reads and writes accounts in core's schema.
type Store struct {
	pool *pgxpool.Pool
	key  seal.Key
	// Log receives a line for each refused row; nil logs none (the event is recorded).
	Log *slog.Logger

	refused seal.Refusals // the refused rows reported already
}

// NewStore returns a store over pool that seals and checks rows with key; the zero key
// honours no account and writes none.
func NewStore(pool *pgxpool.Pool, key seal.Key) *Store { return &Store{pool: pool, key: key} }

// refuse records a row that is not buddi's own, once per process and row: an account.forged
// event and a log line.
func (s *Store) refuse(ctx context.Context, row, name, why, fix string) {
	if !s.refused.First(row + "\x00" + name + "\x00" + why) {
		return
	}
	if s.Log != nil {
		s.Log.Warn("a model account record is refused, and its key is not sent: "+why+"; "+fix, "service", "accounts", "row", row, "name", name)
	}
	if _, err := eventlog.Append(ctx, s.pool, events.AccountForged, "", events.AccountForgedPayload{Row: row, Name: name, Reason: why, Fix: fix}); err != nil && s.Log != nil {
		s.Log.Warn("record a refused model account", "service", "accounts", "err", err)
	}
}

// Add stores a new account, sealed, with an account.added event. An account of the same name
// that buddi did not seal is replaced (the owner adding it again is how it is re-created).
func (s *Store) Add(ctx context.Context, a Account) (Account, error) {
	if err := a.Validate(); err != nil {
		return Account{}, err
	}
	if s.key.IsZero() {
		return Account{}, fmt.Errorf("add account %s: %w", a.Name, ErrNoKey)
	}
	a.Enabled, a.Refused = true, ""
	a.CreatedAt = time.Now().UTC().Truncate(time.Microsecond)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		replaced := false
		old, err := scanAccount(tx.QueryRow(ctx, selectAccount+` WHERE name = $1 FOR UPDATE`, a.Name))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("add account %s: %w", a.Name, err)
		case s.why(old.Account, old.sum) == "":
			return fmt.Errorf("account %s: %w", a.Name, ErrExists)
		default:
			replaced = true
		}
		sum := s.key.Seal(purposeAccount, a.fields()...)
		if replaced {
			_, err = tx.Exec(ctx, `UPDATE core.provider_accounts SET wire = $2, kind = $3, base_url = $4, secret_name = $5,
				enabled = $6, created_at = $7, seal = $8 WHERE name = $1`,
				a.Name, a.Wire, a.Kind, a.BaseURL, a.SecretName, a.Enabled, a.CreatedAt, sum)
		} else {
			_, err = tx.Exec(ctx, `INSERT INTO core.provider_accounts (name, wire, kind, base_url, secret_name, enabled, created_at, seal)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
				a.Name, a.Wire, a.Kind, a.BaseURL, a.SecretName, a.Enabled, a.CreatedAt, sum)
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return fmt.Errorf("account %s: %w", a.Name, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("add account %s: %w", a.Name, err)
		}
		_, err = eventlog.Append(ctx, tx, events.AccountAdded, "", events.AccountAddedPayload{Name: a.Name, Wire: string(a.Wire), Kind: string(a.Kind),
			BaseURL: a.BaseURL, SecretName: a.SecretName, ReplacedUnsealed: replaced})
		return err
	})
	return a, err
}

// why says why a stored account is not buddi's own ("" when its seal checks).
func (s *Store) why(a Account, sum string) string {
	return s.key.Why(sum, purposeAccount, a.fields()...)
}

const selectAccount = `SELECT name, wire, kind, base_url, secret_name, enabled, created_at, seal FROM core.provider_accounts`

// stored is an account row with its seal.
type stored struct {
	Account
	sum string
}

func scanAccount(row pgx.Row) (stored, error) {
	var a stored
	err := row.Scan(&a.Name, &a.Wire, &a.Kind, &a.BaseURL, &a.SecretName, &a.Enabled, &a.CreatedAt, &a.sum)
	return a, err
}

// check fills in a.Refused and records a refusal.
func (s *Store) check(ctx context.Context, a stored) Account {
	if a.Refused = s.why(a.Account, a.sum); a.Refused != "" {
		s.refuse(ctx, "account", a.Name, a.Refused, Fix(a.Name))
	}
	return a.Account
}

// List returns every account by name; one buddi did not seal has Refused set.
func (s *Store) List(ctx context.Context) ([]Account, error) {
	rows, err := s.pool.Query(ctx, selectAccount+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	out := []Account{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		out = append(out, s.check(ctx, a))
	}
	return out, rows.Err()
}

// Get returns one account; an account buddi did not seal is an error matching ErrUnsealed
// (with the row, Refused set, for saying which).
func (s *Store) Get(ctx context.Context, name string) (Account, error) {
	return s.GetIn(ctx, s.pool, name)
}

// GetIn is Get read through q (a transaction that reads more with it).
func (s *Store) GetIn(ctx context.Context, q eventlog.Querier, name string) (Account, error) {
	a, err := scanAccount(q.QueryRow(ctx, selectAccount+` WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, fmt.Errorf("account %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return Account{}, fmt.Errorf("read account %s: %w", name, err)
	}
	if got := s.check(ctx, a); got.Refused != "" {
		return got, fmt.Errorf("account %s is refused because %s: %w", name, got.Refused, ErrUnsealed)
	}
	return a.Account, nil
}

// SetEnabled enables or disables an account, sealed again; the next call on it sees the
// change. An account buddi did not seal is refused (ErrUnsealed): enabling would vouch for
// a base URL someone else chose.
func (s *Store) SetEnabled(ctx context.Context, name string, enabled bool) error {
	if s.key.IsZero() {
		return fmt.Errorf("account %s: %w", name, ErrNoKey)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a, err := scanAccount(tx.QueryRow(ctx, selectAccount+` WHERE name = $1 FOR UPDATE`, name))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("account %s: %w", name, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		if got := s.check(ctx, a); got.Refused != "" {
			return fmt.Errorf("account %s is refused because %s, so it is not changed (%s): %w", name, got.Refused, Fix(name), ErrUnsealed)
		}
		a.Enabled = enabled
		if _, err := tx.Exec(ctx, `UPDATE core.provider_accounts SET enabled = $2, seal = $3 WHERE name = $1`,
			name, enabled, s.key.Seal(purposeAccount, a.fields()...)); err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		kind := events.AccountDisabled
		if enabled {
			kind = events.AccountEnabled
		}
		_, err = eventlog.Append(ctx, tx, kind, "", events.AccountSwitchedPayload{Name: name})
		return err
	})
}

// Remove deletes an account no agent runs on.
func (s *Store) Remove(ctx context.Context, name string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var agents []string
		rows, err := tx.Query(ctx, `SELECT agent FROM core.agent_provider_accounts WHERE account = $1 ORDER BY agent`, name)
		if err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		if agents, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		if len(agents) > 0 {
			return fmt.Errorf("account %s runs %v: give them another account first: %w", name, agents, ErrInUse)
		}
		tag, err := tx.Exec(ctx, `DELETE FROM core.provider_accounts WHERE name = $1`, name)
		if err != nil {
			return fmt.Errorf("remove account %s: %w", name, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("account %s: %w", name, ErrNotFound)
		}
		_, err = eventlog.Append(ctx, tx, events.AccountRemoved, "", events.AccountRemovedPayload{Name: name})
		return err
	})
}

// Assign sets the account and model agent runs on, sealed, with an agent.account_set event.
// The account must be one buddi sealed.
func (s *Store) Assign(ctx context.Context, agent, accountName, model string) (Assignment, error) {
	if model == "" {
		return Assignment{}, fmt.Errorf("give a model: %w", ErrInvalid)
	}
	if s.key.IsZero() {
		return Assignment{}, fmt.Errorf("assign %s to %s: %w", accountName, agent, ErrNoKey)
	}
	as := Assignment{Agent: agent, Account: accountName, Model: model, SetAt: time.Now().UTC().Truncate(time.Microsecond)}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a, err := scanAccount(tx.QueryRow(ctx, selectAccount+` WHERE name = $1 FOR SHARE`, accountName))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("account %s: %w", accountName, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("assign %s to %s: %w", accountName, agent, err)
		}
		if got := s.check(ctx, a); got.Refused != "" {
			return fmt.Errorf("account %s is refused because %s (%s): %w", accountName, got.Refused, Fix(accountName), ErrUnsealed)
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO core.agent_provider_accounts (agent, account, model, set_at, seal) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (agent) DO UPDATE SET account = EXCLUDED.account, model = EXCLUDED.model, set_at = EXCLUDED.set_at, seal = EXCLUDED.seal`,
			as.Agent, as.Account, as.Model, as.SetAt, s.key.Seal(purposeAssignment, as.fields()...)); err != nil {
			return fmt.Errorf("assign %s to %s: %w", accountName, agent, err)
		}
		_, err = eventlog.Append(ctx, tx, events.AgentAccountSet, "", events.AgentAccountSetPayload{
			Agent: as.Agent, Account: as.Account, Model: as.Model, SetAt: as.SetAt})
		return err
	})
	return as, err
}

// Assigned returns agent's assignment; found is false when it has none, or when its row is
// not one buddi sealed (then as.Refused says why, and the refusal is recorded).
func (s *Store) Assigned(ctx context.Context, agent string) (as Assignment, found bool, err error) {
	return s.AssignedIn(ctx, s.pool, agent)
}

// AssignedIn is Assigned read through q (a transaction that reads more with it).
func (s *Store) AssignedIn(ctx context.Context, q eventlog.Querier, agent string) (as Assignment, found bool, err error) {
	var sum string
	err = q.QueryRow(ctx, `SELECT agent, account, model, set_at, seal FROM core.agent_provider_accounts WHERE agent = $1`, agent).
		Scan(&as.Agent, &as.Account, &as.Model, &as.SetAt, &sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return as, false, nil
	}
	if err != nil {
		return as, false, fmt.Errorf("read %s's account: %w", agent, err)
	}
	if as.Refused = s.key.Why(sum, purposeAssignment, as.fields()...); as.Refused != "" {
		s.refuse(ctx, "assignment", agent, as.Refused, FixAssignment(agent))
		return as, false, nil
	}
	return as, true, nil
}
