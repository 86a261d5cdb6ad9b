package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"buddi/dbsource"
	"buddi/runtime/account"
	"buddi/runtime/provider"
)

type accountsCmd struct {
	List    accountsListCmd    `cmd:"" default:"withargs" help:"List the provider accounts."`
	Add     accountsAddCmd     `cmd:"" help:"Add a named provider account; its secret stays in the vault."`
	Show    accountsShowCmd    `cmd:"" help:"Show one account."`
	Disable accountsDisableCmd `cmd:"" help:"Disable an account: the next call on it stops."`
	Enable  accountsEnableCmd  `cmd:"" help:"Enable an account again."`
	Remove  accountsRemoveCmd  `cmd:"" help:"Remove an account no agent runs on."`
}

// openAccounts opens the database and the account store, with the seal key.
func openAccounts(env *runEnv) (*account.Store, *dbsource.Source, error) {
	key, src, err := openSealed(env)
	if err != nil {
		return nil, nil, err
	}
	return account.NewStore(src.Pool, key), src, nil
}

// accountExit maps an account error to the CLI's codes.
func accountExit(err error) error {
	switch {
	case errors.Is(err, account.ErrInvalid):
		return &exitError{code: 2, err: err}
	case errors.Is(err, account.ErrNotFound), errors.Is(err, account.ErrExists), errors.Is(err, account.ErrInUse), errors.Is(err, account.ErrUnsealed):
		return &exitError{code: 1, err: err}
	}
	return err
}

type accountsAddCmd struct {
	Name    string `arg:"" help:"The account's name (lower-case, digits, dashes)."`
	Wire    string `required:"" enum:"anthropic,openai" help:"The wire: anthropic (Messages) or openai (Chat Completions, any compatible endpoint)."`
	Kind    string `enum:"api-key,subscription-token" default:"api-key" help:"How the secret authenticates."`
	BaseURL string `name:"base-url" help:"The endpoint, when not the wire's default (an api-key account only)."`
	Secret  string `required:"" help:"The vault entry that holds the secret (see buddi vault set)."`
	JSON    bool   `help:"Print JSON."`
}

func (c accountsAddCmd) Run(env *runEnv) error {
	a := account.Account{Name: c.Name, Wire: provider.Wire(c.Wire), Kind: provider.CredentialKind(c.Kind), BaseURL: c.BaseURL, SecretName: c.Secret}
	if err := a.Validate(); err != nil {
		return accountExit(err)
	}
	store, src, err := openAccounts(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	a, err = store.Add(env.ctx, a)
	if err != nil {
		return accountExit(err)
	}
	if c.JSON {
		return writeJSON(env, a)
	}
	fmt.Fprintf(env.stdout, "account %s added (%s, %s); its secret is read from the vault entry %s\n", a.Name, a.Wire, a.Kind, a.SecretName)
	if v, err := openVault(); err == nil {
		if present, err := v.Present(a.SecretName); err == nil && !present {
			fmt.Fprintf(env.stdout, "the vault has no %s yet: set it with `buddi vault set %s`\n", a.SecretName, a.SecretName)
		}
	}
	return nil
}

type accountsListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c accountsListCmd) Run(env *runEnv) error {
	store, src, err := openAccounts(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	list, err := store.List(env.ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(env.stdout, "no provider accounts: add one with `buddi accounts add NAME --wire anthropic --secret NAME`")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWIRE\tKIND\tBASE URL\tSECRET\tSTATE")
	refused := 0
	for _, a := range list {
		state, base := "enabled", a.BaseURL
		if !a.Enabled {
			state = "disabled"
		}
		if a.Refused != "" {
			state, refused = "NOT SEALED: never used", refused+1
		}
		if base == "" {
			base = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Wire, a.Kind, base, a.SecretName, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if refused > 0 {
		fmt.Fprintln(env.stdout, "An account that is not sealed was added by an earlier buddi or written into the database, and its key is never sent: check its base URL, then add it again with `buddi accounts add NAME --wire … --secret …`.")
	}
	return nil
}

type accountsShowCmd struct {
	Name string `arg:"" help:"The account."`
	JSON bool   `help:"Print JSON."`
}

func (c accountsShowCmd) Run(env *runEnv) error {
	store, src, err := openAccounts(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	a, err := store.Get(env.ctx, c.Name)
	if err != nil && !errors.Is(err, account.ErrUnsealed) {
		return accountExit(err)
	}
	if c.JSON {
		return writeJSON(env, a)
	}
	fmt.Fprintf(env.stdout, "%s: %s wire, %s, secret in vault entry %s, enabled %v, base URL %q\n", a.Name, a.Wire, a.Kind, a.SecretName, a.Enabled, a.BaseURL)
	if a.Refused != "" {
		fmt.Fprintf(env.stdout, "NOT SEALED: %s; its key is never sent: %s\n", a.Refused, account.Fix(a.Name))
	}
	return nil
}

type accountsEnableCmd struct {
	Name string `arg:"" help:"The account."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"name\",\"enabled\"}."`
}

func (c accountsEnableCmd) Run(env *runEnv) error {
	return setAccountEnabled(env, c.Name, true, c.JSON)
}

type accountsDisableCmd struct {
	Name string `arg:"" help:"The account."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"name\",\"enabled\"}."`
}

func (c accountsDisableCmd) Run(env *runEnv) error {
	return setAccountEnabled(env, c.Name, false, c.JSON)
}

func setAccountEnabled(env *runEnv, name string, enable, asJSON bool) error {
	store, src, err := openAccounts(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := store.SetEnabled(env.ctx, name, enable); err != nil {
		return accountExit(err)
	}
	state := "disabled: its next call stops"
	if enable {
		state = "enabled"
	}
	return report(env, asJSON, acted(map[string]any{"name": name, "enabled": enable}), "account %s %s", name, state)
}

type accountsRemoveCmd struct {
	Name string `arg:"" help:"The account."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"name\"}."`
}

func (c accountsRemoveCmd) Run(env *runEnv) error {
	store, src, err := openAccounts(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := store.Remove(env.ctx, c.Name); err != nil {
		return accountExit(err)
	}
	return report(env, c.JSON, acted(map[string]any{"name": c.Name}), "account %s removed (the vault entry stays)", c.Name)
}
