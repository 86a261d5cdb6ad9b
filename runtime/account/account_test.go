package account_test

import (
	"context"
	"errors"
	"testing"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal/sealtest"
	"buddi/internal/pgtest"
	"buddi/runtime/account"
	"buddi/runtime/provider"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestAccountsLifecycle(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := account.NewStore(pool, sealtest.Key(t))
	ctx := context.Background()
	a, err := s.Add(ctx, account.Account{Name: "work", Wire: provider.WireAnthropic, Kind: provider.CredentialAPIKey, SecretName: "ANTHROPIC_WORK"})
	if err != nil || !a.Enabled {
		t.Fatalf("add: %+v, %v", a, err)
	}
	if _, err := s.Add(ctx, a); !errors.Is(err, account.ErrExists) {
		t.Errorf("second add: %v, want ErrExists", err)
	}
	if _, err := s.Assign(ctx, "developer", "work", "claude-sonnet-4-5"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assign(ctx, "developer", "nope", "m"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("assign to a missing account: %v", err)
	}
	as, found, err := s.Assigned(ctx, "developer")
	if err != nil || !found || as.Account != "work" || as.Model != "claude-sonnet-4-5" {
		t.Errorf("assigned = %+v, %v, %v", as, found, err)
	}
	if err := s.Remove(ctx, "work"); !errors.Is(err, account.ErrInUse) {
		t.Errorf("remove while in use: %v, want ErrInUse", err)
	}
	if err := s.SetEnabled(ctx, "work", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "work"); got.Enabled {
		t.Error("still enabled after disable")
	}
	ev, _ := eventlog.List(ctx, pool, eventlog.Filter{Kind: events.AccountAdded.Family()})
	if len(ev) != 2 {
		t.Errorf("account events = %d, want added and disabled", len(ev))
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := account.Account{Name: "work", Wire: provider.WireOpenAI, Kind: provider.CredentialAPIKey, SecretName: "OPENAI_KEY", BaseURL: "http://127.0.0.1:8080/v1"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid account refused: %v", err)
	}
	bad := []func(a account.Account) account.Account{
		func(a account.Account) account.Account { a.Name = "Work"; return a },
		func(a account.Account) account.Account { a.Wire = "gemini"; return a },
		func(a account.Account) account.Account { a.Kind = provider.CredentialSubscriptionToken; return a },
		func(a account.Account) account.Account { a.SecretName = "lower"; return a },
		func(a account.Account) account.Account {
			a.Wire, a.Kind = provider.WireAnthropic, provider.CredentialSubscriptionToken
			return a
		},
	}
	for i, f := range bad {
		if err := f(ok).Validate(); !errors.Is(err, account.ErrInvalid) {
			t.Errorf("case %d: %v, want ErrInvalid", i, err)
		}
	}
}

// Rows written straight into the tables (as whoever can write the database would) are no
// accounts: Get refuses them, List marks them, enabling one is refused, and adding the
// account again through buddi replaces it.
func TestForgedAccountsAreRefused(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := account.NewStore(pool, sealtest.Key(t))
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO core.provider_accounts (name, wire, kind, base_url, secret_name) VALUES ('work', 'anthropic', 'api-key', 'http://127.0.0.1:1', 'ANTHROPIC_WORK')`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "work"); !errors.Is(err, account.ErrUnsealed) {
		t.Errorf("Get of a forged account: %v, want ErrUnsealed", err)
	}
	if list, err := s.List(ctx); err != nil || len(list) != 1 || list[0].Refused == "" {
		t.Errorf("List: %+v %v, want the forged account marked", list, err)
	}
	if err := s.SetEnabled(ctx, "work", true); !errors.Is(err, account.ErrUnsealed) {
		t.Errorf("enabling a forged account: %v, want ErrUnsealed", err)
	}
	if _, err := s.Assign(ctx, "developer", "work", "m"); !errors.Is(err, account.ErrUnsealed) {
		t.Errorf("assigning a forged account: %v, want ErrUnsealed", err)
	}
	if evs, _ := eventlog.List(ctx, pool, eventlog.Filter{Kind: string(events.AccountForged)}); len(evs) != 1 {
		t.Errorf("account.forged events: %d, want 1 (each refusal recorded once)", len(evs))
	}
	// The owner adds it again: it replaces the forged row.
	a, err := s.Add(ctx, account.Account{Name: "work", Wire: provider.WireAnthropic, Kind: provider.CredentialAPIKey, SecretName: "ANTHROPIC_WORK"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "work"); err != nil || got.BaseURL != "" || got.Refused != "" || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("after adding it again: %+v %v", got, err)
	}
	// Any field changed in the table breaks the seal; so does a seal copied from another row.
	for _, sql := range []string{
		`UPDATE core.provider_accounts SET base_url = 'http://127.0.0.1:1' WHERE name = 'work'`,
		`UPDATE core.provider_accounts SET secret_name = 'OTHER_KEY' WHERE name = 'work'`,
		`UPDATE core.provider_accounts SET wire = 'openai' WHERE name = 'work'`,
	} {
		if _, err := s.Add(ctx, account.Account{Name: "work", Wire: provider.WireAnthropic, Kind: provider.CredentialAPIKey, SecretName: "ANTHROPIC_WORK"}); err != nil && !errors.Is(err, account.ErrExists) {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `UPDATE core.provider_accounts SET seal = (SELECT seal FROM core.provider_accounts WHERE name = 'work') WHERE name = 'work'`); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "work"); !errors.Is(err, account.ErrUnsealed) {
			t.Errorf("%s: Get %v, want ErrUnsealed", sql, err)
		}
	}
	if _, err := s.Add(ctx, account.Account{Name: "home", Wire: provider.WireAnthropic, Kind: provider.CredentialAPIKey, SecretName: "ANTHROPIC_HOME"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE core.provider_accounts SET base_url = '', secret_name = 'ANTHROPIC_HOME', wire = 'anthropic',
		seal = (SELECT seal FROM core.provider_accounts WHERE name = 'home') WHERE name = 'work'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "work"); !errors.Is(err, account.ErrUnsealed) {
		t.Errorf("a seal copied from another account: Get %v, want ErrUnsealed", err)
	}
	// An assignment re-pointed in the table is no assignment.
	if _, err := s.Assign(ctx, "developer", "home", "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE core.agent_provider_accounts SET model = 'other' WHERE agent = 'developer'`); err != nil {
		t.Fatal(err)
	}
	if as, found, err := s.Assigned(ctx, "developer"); found || err != nil || as.Refused == "" {
		t.Errorf("a re-pointed assignment: %+v %v %v", as, found, err)
	}
	if _, err := s.Assign(ctx, "developer", "home", "m"); err != nil {
		t.Fatal(err)
	}
	if as, found, err := s.Assigned(ctx, "developer"); !found || err != nil || as.Model != "m" {
		t.Errorf("the assignment set again: %+v %v %v", as, found, err)
	}
}
