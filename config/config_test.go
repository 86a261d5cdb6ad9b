package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

func TestDefaults(t *testing.T) {
	t.Setenv("HOME", "/home/owner")
	c, err := FromLookup(lookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != filepath.Join("/home/owner", ".buddi") || c.WebHost != "127.0.0.1" || c.WebPort != 4317 || !c.Embedded() {
		t.Errorf("defaults = %+v", c)
	}
	if c.WebAddr() != "127.0.0.1:4317" || c.ClusterDir() != "/home/owner/.buddi/pg" {
		t.Errorf("WebAddr %q ClusterDir %q", c.WebAddr(), c.ClusterDir())
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	c, err := FromLookup(lookup(map[string]string{
		"BUDDI_HOME": "/srv/b", "BUDDI_WEB_PORT": " 5000 ", "BUDDI_WEB_HOST": "::1",
		"DATABASE_URL": "postgres://x@y/z", "BUDDI_PG_BINDIR": "/opt/pg/bin",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != "/srv/b" || c.WebPort != 5000 || c.WebHost != "::1" || c.Embedded() || c.PGBinDir != "/opt/pg/bin" {
		t.Errorf("got %+v", c)
	}
}

func TestBadPort(t *testing.T) {
	for _, p := range []string{"http", "0", "70000", "-1"} {
		_, err := FromLookup(lookup(map[string]string{"BUDDI_HOME": "/x", "BUDDI_WEB_PORT": p}))
		if err == nil || !strings.Contains(err.Error(), "BUDDI_WEB_PORT") {
			t.Errorf("BUDDI_WEB_PORT=%q: err = %v, want one naming the variable", p, err)
		}
	}
}

// Off loopback the binding stops being the credential: remote mode; a wildcard is refused.
func TestWebHost(t *testing.T) {
	for _, h := range []string{"0.0.0.0", "::"} {
		_, err := FromLookup(lookup(map[string]string{"BUDDI_HOME": "/x", "BUDDI_WEB_HOST": h}))
		if err == nil || !strings.Contains(err.Error(), "BUDDI_WEB_HOST") {
			t.Errorf("BUDDI_WEB_HOST=%s: err = %v, want a refusal naming the variable", h, err)
		}
	}
	for h, remote := range map[string]bool{"127.0.0.1": false, "localhost": false, "::1": false, "127.0.0.2": false, "192.0.2.10": true, "buddi.example": true} {
		c, err := FromLookup(lookup(map[string]string{"BUDDI_HOME": "/x", "BUDDI_WEB_HOST": h}))
		if err != nil {
			t.Errorf("BUDDI_WEB_HOST=%s: %v", h, err)
		} else if c.Remote() != remote {
			t.Errorf("BUDDI_WEB_HOST=%s: remote %v, want %v", h, c.Remote(), remote)
		}
	}
}
