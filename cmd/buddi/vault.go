package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"buddi/core/vault"
	"buddi/datadir"
)

type vaultCmd struct {
	Set    vaultSetCmd    `cmd:"" help:"Store a secret, read from standard input (never from an argument)."`
	Get    vaultGetCmd    `cmd:"" help:"Say whether a secret is present; its value is never printed."`
	Delete vaultDeleteCmd `cmd:"" help:"Remove a secret."`
	List   vaultListCmd   `cmd:"" help:"List the names of the stored secrets."`
}

// openVault opens the owner's vault as buddi serve does (vault.OpenOwner): <home>/vault.json
// sealed with the key from BUDDI_VAULT_KEY, the OS keychain or the key file, or the OS
// keychain's own vault where there is one and no key.
func openVault() (vault.Vault, error) {
	v, _, err := openVaultKey()
	return v, err
}

// openVaultKey is openVault, also saying where the key was found.
func openVaultKey() (vault.Vault, vault.Key, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, vault.Key{}, err
	}
	if err := datadir.PrepareHome(cfg.Home); err != nil {
		return nil, vault.Key{}, err
	}
	v, key, err := vault.OpenOwner(vaultPath(cfg.Home), os.Getenv)
	if err != nil {
		return nil, key, &exitError{code: 2, err: err}
	}
	return v, key, nil
}

// vaultPath is the vault file in home.
func vaultPath(home string) string { return filepath.Join(home, "vault.json") }

// vaultExit maps a vault error to the CLI's codes: a locked vault must be unlocked first (3).
func vaultExit(err error) error {
	if errors.Is(err, vault.ErrLocked) {
		return &exitError{code: 3, err: err}
	}
	if errors.Is(err, vault.ErrInvalidName) || errors.Is(err, vault.ErrInvalidValue) {
		return &exitError{code: 2, err: err}
	}
	return err
}

type vaultSetCmd struct {
	Name string `arg:"" help:"The secret's name, like TELEGRAM_BOT_TOKEN."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"name\",\"vault\"} (never the value)."`
}

func (c vaultSetCmd) Run(env *runEnv) error {
	v, err := openVault()
	if err != nil {
		return err
	}
	if err := vault.CheckName(c.Name); err != nil {
		return vaultExit(err)
	}
	value, err := readSecret(os.Stdin)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := v.Set(c.Name, value); err != nil {
		return vaultExit(err)
	}
	return report(env, c.JSON, acted(map[string]any{"name": c.Name, "vault": fmt.Sprint(v)}), "%s stored in %s", c.Name, v)
}

// readSecret reads one line (or the whole input) and trims the line end.
func readSecret(r io.Reader) (string, error) {
	raw, err := io.ReadAll(bufio.NewReader(io.LimitReader(r, vault.MaxValueLen+2)))
	if err != nil {
		return "", fmt.Errorf("read the secret from standard input: %w", err)
	}
	value := strings.TrimRight(string(raw), "\r\n")
	if value == "" {
		return "", errors.New("no secret on standard input: pipe it in, e.g. `printf %s \"$TOKEN\" | buddi vault set NAME`")
	}
	return value, nil
}

type vaultGetCmd struct {
	Name string `arg:"" help:"The secret's name."`
	JSON bool   `help:"Print JSON."`
}

func (c vaultGetCmd) Run(env *runEnv) error {
	v, err := openVault()
	if err != nil {
		return err
	}
	present, err := v.Present(c.Name)
	if err != nil {
		return vaultExit(err)
	}
	if c.JSON {
		if err := writeJSON(env, map[string]any{"name": c.Name, "present": present}); err != nil {
			return err
		}
	} else if present {
		fmt.Fprintf(env.stdout, "%s is present (its value is never printed)\n", c.Name)
	} else {
		fmt.Fprintf(env.stdout, "%s is not set: set it with `buddi vault set %s`\n", c.Name, c.Name)
	}
	if !present {
		return &exitError{code: 1}
	}
	return nil
}

type vaultDeleteCmd struct {
	Name string `arg:"" help:"The secret's name."`
	JSON bool   `name:"json" help:"Print JSON: {\"ok\",\"name\"}."`
}

func (c vaultDeleteCmd) Run(env *runEnv) error {
	v, err := openVault()
	if err != nil {
		return err
	}
	if err := v.Delete(c.Name); err != nil {
		if errors.Is(err, vault.ErrNotFound) {
			return &exitError{code: 1, err: err}
		}
		return vaultExit(err)
	}
	return report(env, c.JSON, acted(map[string]any{"name": c.Name}), "%s deleted", c.Name)
}

type vaultListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c vaultListCmd) Run(env *runEnv) error {
	v, err := openVault()
	if err != nil {
		return err
	}
	names, err := v.List()
	if err != nil {
		return vaultExit(err)
	}
	if c.JSON {
		if names == nil {
			names = []string{}
		}
		return writeJSON(env, names)
	}
	if len(names) == 0 {
		fmt.Fprintln(env.stdout, "the vault holds no secrets")
	}
	for _, n := range names {
		fmt.Fprintln(env.stdout, n)
	}
	return nil
}
