package service

import (
	"fmt"
	"strings"
)

// SystemdUnit is the user unit that runs s: buddi serve, restarted when it fails, stopped by
// SIGTERM to buddi alone (it stops its own PostgreSQL in order).
func SystemdUnit(s Spec) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# buddi as a systemd user service, written by `buddi service install`.\n")
	if s.EnvFile != "" {
		b.WriteString("# It holds no secret: the vault key is in the EnvironmentFile (mode 0600), alone.\n")
	} else {
		b.WriteString("# It holds no secret: buddi finds its vault key in its key file or the keychain.\n")
	}
	b.WriteString("[Unit]\nDescription=buddi, a personal agent platform\n\n")
	b.WriteString("[Service]\nType=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s serve\n", systemdQuote(s.Binary))
	b.WriteString("Restart=on-failure\nRestartSec=5\nKillMode=mixed\nTimeoutStopSec=60\n")
	for _, kv := range s.vars() {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(kv[0]+"="+kv[1]))
	}
	if s.EnvFile != "" {
		fmt.Fprintf(&b, "EnvironmentFile=%s\n", systemdEscape(s.EnvFile))
	}
	b.WriteString("\n[Install]\nWantedBy=default.target\n")
	return b.String(), nil
}

// systemdQuote double-quotes v for a unit file: quotes and backslashes escaped, % doubled
// (systemd's specifiers), $ doubled (ExecStart's variable expansion).
func systemdQuote(v string) string {
	return `"` + systemdEscape(v) + `"`
}

func systemdEscape(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`, `$`, `$$`)
	return r.Replace(v)
}
