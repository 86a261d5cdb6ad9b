// Package service runs buddi serve as the owner's own background service: a systemd user
// unit on Linux, a launchd agent on macOS. It writes the unit from a Spec (the absolute path of
// the binary, the home, the few non-secret variables buddi reads), tells the service manager
// when one is there, and otherwise says what to run. No secret is ever in the unit: buddi
// finds its vault key itself (key file or keychain); only when the key exists nowhere but in
// the installing shell's BUDDI_VAULT_KEY is it written, alone, to a 0600 environment file the
// unit reads.
package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Name is the systemd unit's name; Label is the launchd agent's.
const (
	Name  = "buddi.service"
	Label = "dev.buddi.serve"
)

// EnvFileName is the environment file, in the home, that holds BUDDI_VAULT_KEY when the key
// is nowhere else.
const EnvFileName = "service.env"

// KeyVar is the only variable the environment file may hold.
const KeyVar = "BUDDI_VAULT_KEY"

// Carried are the variables the unit copies from the installing shell when set: buddi's own
// settings, none of them a secret (DATABASE_URL, which may hold a password, is not one).
var Carried = []string{
	"BUDDI_WEB_HOST", "BUDDI_WEB_PORT", "BUDDI_PREVIEW_PORT", "BUDDI_PG_BINDIR", "BUDDI_KEYCHAIN",
	"BUDDI_TAILNET_HOSTNAME", "BUDDI_TAILNET_HTTPS", "TS_CONTROL_URL", "XDG_CONFIG_HOME", "PATH", "LANG",
}

// Spec is what a unit runs.
type Spec struct {
	// Binary is the absolute path of the buddi binary.
	Binary string
	// Home is BUDDI_HOME, always set in the unit.
	Home string
	// Env are further variables for the unit (see Carried); never a secret.
	Env map[string]string
	// EnvFile, when set, is read by the unit for BUDDI_VAULT_KEY.
	EnvFile string
}

// Validate refuses a spec the service manager would run wrongly.
func (s Spec) Validate() error {
	if !filepath.IsAbs(s.Binary) {
		return fmt.Errorf("service: the binary %q is not an absolute path", s.Binary)
	}
	if !filepath.IsAbs(s.Home) {
		return fmt.Errorf("service: the home %q is not an absolute path", s.Home)
	}
	for k, v := range s.Env {
		if k == KeyVar || k == "DATABASE_URL" {
			return fmt.Errorf("service: %s may not be written into the unit", k)
		}
		if strings.ContainsAny(k+v, "\n\r\x00") {
			return fmt.Errorf("service: %s holds a line break", k)
		}
	}
	return nil
}

// vars are the unit's variables, BUDDI_HOME first, the rest sorted.
func (s Spec) vars() [][2]string {
	out := [][2]string{{"BUDDI_HOME", s.Home}}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		if k != "BUDDI_HOME" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, [2]string{k, s.Env[k]})
	}
	return out
}

// CarriedEnv picks the Carried variables that getenv has a value for.
func CarriedEnv(getenv func(string) string) map[string]string {
	env := map[string]string{}
	for _, k := range Carried {
		if v := getenv(k); v != "" {
			env[k] = v
		}
	}
	return env
}

// WriteEnvFile writes path (mode 0600, replacing what was there) holding BUDDI_VAULT_KEY and
// nothing else, in a form both systemd's EnvironmentFile= and sh read.
func WriteEnvFile(path, key string) error {
	key = strings.TrimSpace(key)
	if key == "" {
		return errors.New("service: no vault key to write")
	}
	if strings.ContainsAny(key, "'\n\r\x00\\") {
		return errors.New("the vault key holds a quote, backslash or line break, which an environment file cannot carry: keep it in the key file instead (`buddi init`)")
	}
	tmp := path + ".new"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = fmt.Fprintf(f, "%s='%s'\n", KeyVar, key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
