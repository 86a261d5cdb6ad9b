// Package account keeps the named provider accounts (seed 004, "Named provider accounts"):
// which wire, which credential kind, which base URL, and the name of the vault entry that
// holds the secret — never the secret itself — plus each agent's assignment of an account
// and a model. A disabled account stops the next call; there is no fallback across accounts.
package account

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
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
}

// Assignment is the account and model an agent runs on.
type Assignment struct {
	Agent   string    `json:"agent"`   // the agent's id
	Account string    `json:"account"` // the account's name
	Model   string    `json:"model"`   // the model id on that account's wire
	SetAt   time.Time `json:"set_at"`  // when the owner set it
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
)

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
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Add stores a new account, with an account.added event.
func (s *Store) Add(ctx context.Context, a Account) (Account, error) {
	if err := a.Validate(); err != nil {
		return Account{}, err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO core.provider_accounts (name, wire, kind, base_url, secret_name)
			VALUES ($1, $2, $3, $4, $5) RETURNING enabled, created_at`,
			a.Name, a.Wire, a.Kind, a.BaseURL, a.SecretName).Scan(&a.Enabled, &a.CreatedAt)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return fmt.Errorf("account %s: %w", a.Name, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("add account %s: %w", a.Name, err)
		}
		_, err = eventlog.Append(ctx, tx, "account.added", "", map[string]any{"name": a.Name, "wire": a.Wire, "kind": a.Kind, "base_url": a.BaseURL, "secret_name": a.SecretName})
		return err
	})
	return a, err
}

const selectAccount = `SELECT name, wire, kind, base_url, secret_name, enabled, created_at FROM core.provider_accounts`

func scanAccount(row pgx.Row) (Account, error) {
	var a Account
	err := row.Scan(&a.Name, &a.Wire, &a.Kind, &a.BaseURL, &a.SecretName, &a.Enabled, &a.CreatedAt)
	return a, err
}

// List returns every account by name.
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
		out = append(out, a)
	}
	return out, rows.Err()
}

// Get returns one account.
func (s *Store) Get(ctx context.Context, name string) (Account, error) {
	a, err := scanAccount(s.pool.QueryRow(ctx, selectAccount+` WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, fmt.Errorf("account %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return Account{}, fmt.Errorf("read account %s: %w", name, err)
	}
	return a, nil
}

// SetEnabled enables or disables an account; the next call on it sees the change.
func (s *Store) SetEnabled(ctx context.Context, name string, enabled bool) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE core.provider_accounts SET enabled = $2 WHERE name = $1`, name, enabled)
		if err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("account %s: %w", name, ErrNotFound)
		}
		kind := "account.disabled"
		if enabled {
			kind = "account.enabled"
		}
		_, err = eventlog.Append(ctx, tx, kind, "", map[string]any{"name": name})
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
		_, err = eventlog.Append(ctx, tx, "account.removed", "", map[string]any{"name": name})
		return err
	})
}

// Assign sets the account and model agent runs on, with an agent.account_set event.
func (s *Store) Assign(ctx context.Context, agent, accountName, model string) (Assignment, error) {
	if model == "" {
		return Assignment{}, fmt.Errorf("give a model: %w", ErrInvalid)
	}
	var as Assignment
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO core.agent_provider_accounts (agent, account, model) VALUES ($1, $2, $3)
			ON CONFLICT (agent) DO UPDATE SET account = EXCLUDED.account, model = EXCLUDED.model, set_at = now()
			RETURNING agent, account, model, set_at`, agent, accountName, model).Scan(&as.Agent, &as.Account, &as.Model, &as.SetAt)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23503" {
			return fmt.Errorf("account %s: %w", accountName, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("assign %s to %s: %w", accountName, agent, err)
		}
		_, err = eventlog.Append(ctx, tx, "agent.account_set", "", as)
		return err
	})
	return as, err
}

// Assigned returns agent's assignment; found is false when it has none.
func (s *Store) Assigned(ctx context.Context, agent string) (as Assignment, found bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT agent, account, model, set_at FROM core.agent_provider_accounts WHERE agent = $1`, agent).
		Scan(&as.Agent, &as.Account, &as.Model, &as.SetAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return as, false, nil
	}
	if err != nil {
		return as, false, fmt.Errorf("read %s's account: %w", agent, err)
	}
	return as, true, nil
}
