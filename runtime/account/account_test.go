package account_test

import (
	"context"
	"errors"
	"testing"

	"buddi/core/eventlog"
	"buddi/internal/pgtest"
	"buddi/runtime/account"
	"buddi/runtime/provider"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestAccountsLifecycle(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	s := account.NewStore(pool)
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
	ev, _ := eventlog.List(ctx, pool, eventlog.Filter{Kind: "account."})
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
