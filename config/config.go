// Package config reads buddi's settings from the environment. The zero value of each field
// means "use the default"; every field names its default and its environment variable.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// DefaultWebPort is the dashboard's port when BUDDI_WEB_PORT is unset.
const DefaultWebPort = 4317

// Config is everything buddi reads from its environment at start.
type Config struct {
	// Home is the data directory. Default ~/.buddi; environment BUDDI_HOME.
	Home string
	// DatabaseURL points at a Postgres server the owner runs. When empty buddi runs its own
	// cluster inside Home. Environment DATABASE_URL.
	DatabaseURL string
	// WebHost is the address the dashboard binds. Default 127.0.0.1; environment BUDDI_WEB_HOST.
	WebHost string
	// WebPort is the dashboard's port. Default 4317; environment BUDDI_WEB_PORT.
	WebPort int
	// PreviewPort is where the previews' listener tries first (it steps along when the port
	// is taken). Default the dashboard's port + 1; environment BUDDI_PREVIEW_PORT.
	PreviewPort int
	// PGBinDir, when set, is the only directory searched for initdb and postgres (refused
	// when it holds another major than the cluster's). Default: the installation of the
	// cluster's PG_VERSION (Debian's /usr/lib/postgresql/N/bin, Homebrew's postgresql@N,
	// pg_config --bindir, PATH), the newest for a new cluster. Environment BUDDI_PG_BINDIR.
	PGBinDir string
	// Tailnet turns the embedded tailnet node on for this run, whatever the saved setting
	// (`buddi tailnet on`). Flag --tailnet of buddi serve.
	Tailnet bool
	// TailnetHostname is the node's name on the tailnet. Default "buddi"; environment
	// BUDDI_TAILNET_HOSTNAME, flag --tailnet-hostname.
	TailnetHostname string
	// TailnetControlURL is the coordination server, for a self-hosted one. Default Tailscale's;
	// environment TS_CONTROL_URL, flag --tailnet-control-url.
	TailnetControlURL string
	// TailnetNoHTTPS keeps the node to plain HTTP even when the tailnet offers certificates
	// (each certificate puts the node's name in the public Certificate Transparency logs).
	// Environment BUDDI_TAILNET_HTTPS=off (default auto).
	TailnetNoHTTPS bool
}

// FromEnv builds a Config from the process environment and fills in defaults.
func FromEnv() (Config, error) {
	return FromLookup(os.LookupEnv)
}

// FromLookup builds a Config from a lookup function shaped like os.LookupEnv.
func FromLookup(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	c := Config{
		Home:        get("BUDDI_HOME"),
		DatabaseURL: get("DATABASE_URL"),
		WebHost:     get("BUDDI_WEB_HOST"),
		PGBinDir:    get("BUDDI_PG_BINDIR"),

		TailnetHostname:   get("BUDDI_TAILNET_HOSTNAME"),
		TailnetControlURL: get("TS_CONTROL_URL"),
	}
	switch v := strings.ToLower(get("BUDDI_TAILNET_HTTPS")); v {
	case "", "auto":
	case "off":
		c.TailnetNoHTTPS = true
	default:
		return Config{}, fmt.Errorf("BUDDI_TAILNET_HTTPS=%q is neither auto nor off: say off to keep the tailnet to plain HTTP", v)
	}
	if p := get("BUDDI_WEB_PORT"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("BUDDI_WEB_PORT=%q is not a port: give a number from 1 to 65535", p)
		}
		c.WebPort = n
	}
	if p := get("BUDDI_PREVIEW_PORT"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1024 || n > 65535 {
			return Config{}, fmt.Errorf("BUDDI_PREVIEW_PORT=%q is not a port buddi can use: give a number from 1024 to 65535", p)
		}
		c.PreviewPort = n
	}
	if err := c.fill(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func (c *Config) fill() error {
	if c.Home == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return errors.New("cannot find your home directory: set BUDDI_HOME to the directory buddi should keep its data in")
		}
		c.Home = filepath.Join(home, ".buddi")
	}
	abs, err := filepath.Abs(c.Home)
	if err != nil {
		return fmt.Errorf("resolve BUDDI_HOME %q: %w", c.Home, err)
	}
	c.Home = abs
	if c.WebHost == "" {
		c.WebHost = "127.0.0.1"
	}
	if ip := net.ParseIP(c.WebHost); ip != nil && ip.IsUnspecified() {
		// A wildcard binding has no one name a request's Host can be checked against.
		return fmt.Errorf("BUDDI_WEB_HOST=%s listens on every address: name the one address to listen on (off loopback, sign-in with `buddi dashboard` is required)", c.WebHost)
	}
	if err := c.checkTailnet(); err != nil {
		return err
	}
	if c.WebPort == 0 {
		c.WebPort = DefaultWebPort
	}
	if c.PreviewPort == 0 {
		c.PreviewPort = c.WebPort + 1
		if c.PreviewPort > 65535 {
			c.PreviewPort = c.WebPort - 1
		}
	}
	return nil
}

// Remote reports whether the dashboard listens off loopback: then the binding is no longer the
// credential, and every request needs a session from a sign-in ticket (`buddi dashboard`).
func (c Config) Remote() bool {
	if c.WebHost == "localhost" {
		return false
	}
	ip := net.ParseIP(c.WebHost)
	return ip == nil || !ip.IsLoopback()
}

// Embedded reports whether buddi runs its own Postgres (no DATABASE_URL given).
func (c Config) Embedded() bool { return c.DatabaseURL == "" }

// WebAddr is the dashboard's listen address, host:port.
func (c Config) WebAddr() string {
	return net.JoinHostPort(c.WebHost, fmt.Sprint(c.WebPort))
}

// ClusterDir is where the embedded Postgres cluster lives: <home>/pg.
func (c Config) ClusterDir() string { return filepath.Join(c.Home, "pg") }

var hostnameLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// checkTailnet checks the tailnet node's name and control URL, and fills the default name.
func (c *Config) checkTailnet() error {
	if c.TailnetHostname == "" {
		c.TailnetHostname = "buddi"
	}
	if !hostnameLabel.MatchString(c.TailnetHostname) {
		return fmt.Errorf("the tailnet hostname %q is not a DNS label: use lower-case letters, digits and inner hyphens, at most 63", c.TailnetHostname)
	}
	if c.TailnetControlURL != "" {
		u, err := url.Parse(c.TailnetControlURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("the tailnet control URL %q is not an http(s) URL: give the coordination server's address, like https://headscale.example.com", c.TailnetControlURL)
		}
	}
	return nil
}

// Fill fills in defaults and checks the settings, after flags changed some.
func (c *Config) Fill() error { return c.fill() }
