package permission

import (
	"net/url"
	"strings"
	"testing"
)

func TestMatchHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host, entry string
		want        bool
	}{
		{"example.com", "example.com", true},
		{"api.example.com", "example.com", true},
		{"a.b.example.com", "example.com", true},
		{"EXAMPLE.com", "example.COM", true},
		{"example.com.", "example.com", true},
		{"example.com", "example.com.", true},
		{"evil-example.com", "example.com", false},
		{"example.com.evil.com", "example.com", false},
		{"notexample.com", "example.com", false},
		{"example.co", "example.com", false},
		{"com", "example.com", false},
		{"example.com", "api.example.com", false},
		{"127.0.0.1", "127.0.0.1", true},
		{"evil.127.0.0.1", "127.0.0.1", false},
		{"127.0.0.2", "127.0.0.1", false},
		{"::1", "[::1]", true},
		{"0:0::1", "::1", true},
		{"example.com", "*.example.com", false},
		{"api.example.com", "*.example.com", false},
		{"example.com", ".example.com", false},
		{"example.com", "https://example.com", false},
		{"example.com", "example.com:443", false},
		{"example.com", "example.com/path", false},
		{"example.com", "", false},
		{"", "example.com", false},
		{"ex ample.com", "example.com", false},
		{"example..com", "example.com", false},
		{"exämple.com", "exämple.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.host+"~"+tt.entry, func(t *testing.T) {
			if got := MatchHost(tt.host, tt.entry); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestURLHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want string // "": an error
	}{
		{"https://example.com/a?b#c", "example.com"},
		{"http://API.Example.COM:8080/", "api.example.com"},
		{"https://example.com./", "example.com"},
		{"https://user:pass@example.com/", "example.com"},
		{"https://example.com@evil.com/", "evil.com"},
		{"https://evil.com#@example.com", "evil.com"},
		{"https://evil.com?@example.com", "evil.com"},
		{"http://127.0.0.1:9/", "127.0.0.1"},
		{"http://[::1]:80/", "::1"},
		{"wss://example.com/socket", "example.com"},
		{`https://evil.com\@example.com/`, ""},
		{`https://example.com\.evil.com/`, ""},
		{"https://exa mple.com/", ""},
		{"https://example.com/ x", ""},
		{"https://example.com\t/", ""},
		{"https://example.com\n.evil.com/", ""},
		{"https://example.com\x00.evil.com/", ""},
		{"example.com/path", ""},
		{"//example.com/path", ""},
		{"/relative", ""},
		{"", ""},
		{"mailto:a@example.com", ""},
		{"file:///etc/passwd", ""},
		{"https://", ""},
		{"https://:443/", ""},
		{"http://[::1/", ""},
		{"https://exämple.com/", ""},
		{"https://%65xample.com/", ""},
		{"https://example.com:99999999999/", "example.com"}, // the port is not the policy's business
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := URLHost(tt.url)
			if tt.want == "" {
				if err == nil {
					t.Errorf("got %q, want an error", got)
				} else if !strings.HasPrefix(err.Error(), "permission: url ") {
					t.Errorf("got error %q, want it to name the url", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	hosts := []string{"example.com", "docs.python.org", "10.0.0.1", "*.bad.com", "https://x.com"}
	tests := []struct {
		url  string
		want bool
	}{
		{"https://example.com/", true},
		{"https://www.example.com/", true},
		{"https://docs.python.org/3/", true},
		{"https://python.org/", false},
		{"https://evil-example.com/", false},
		{"https://example.com.evil.com/", false},
		{"http://10.0.0.1:8080/", true},
		{"http://10.0.0.10/", false},
		{"https://bad.com/", false},
		{"https://a.bad.com/", false},
		{"https://x.com/", false},
		{"example.com", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			if got := HostAllowed(tt.url, hosts); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSettingsNetworkPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		set  NetworkPolicy
		want NetworkPolicy
	}{
		{"", NetworkAllow},
		{NetworkAllow, NetworkAllow},
		{NetworkAllowlist, NetworkAllowlist},
		{NetworkDeny, NetworkDeny},
		{"Allow", NetworkDeny},
		{"open", NetworkDeny},
	}
	for _, tt := range tests {
		t.Run(string(tt.set), func(t *testing.T) {
			if got := (Settings{Network: tt.set}).NetworkPolicy(); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if got := Merge().NetworkPolicy(); got != NetworkAllow {
		t.Errorf("got default %v, want %v", got, NetworkAllow)
	}
}

// FuzzHostAllowed: URL and host parsing never panic; a URL that cannot be read is never
// allowed; an allowed host is the entry or a subdomain of it; and a look-alike made by
// prefixing the entry is never allowed.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"https://example.com/", "https://api.example.com:8/x", "https://evil-example.com/",
		`https://evil.com\@example.com/`, "https://a@b/", "http://[::1]/", "example.com", "https://EXAMPLE.com./", "%"} {
		f.Add(s, "example.com")
	}
	f.Fuzz(func(t *testing.T, raw, entry string) {
		h, err := URLHost(raw)
		allowed := HostAllowed(raw, []string{entry})
		if err != nil {
			if allowed {
				t.Errorf("url %q cannot be read (%v) but is allowed for %q", raw, err, entry)
			}
			if !strings.HasPrefix(err.Error(), "permission: url ") {
				t.Errorf("got error %q, want it to name the url", err)
			}
			return
		}
		// What Go's own parser says the host is agrees with URLHost.
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("url %q: URLHost read %q but url.Parse fails: %v", raw, h, perr)
		}
		if n, ok := normalizeHost(u.Hostname()); !ok || n != h {
			t.Errorf("url %q: got host %q, want %q from url.Parse", raw, h, n)
		}
		if allowed {
			e, ok := normalizeHost(entry)
			if !ok {
				t.Errorf("entry %q cannot be read but allows %q", entry, raw)
			} else if h != e && !strings.HasSuffix(h, "."+e) {
				t.Errorf("url %q host %q allowed by %q, want the entry or a subdomain", raw, h, entry)
			}
		}
		if e, ok := normalizeHost(entry); ok && strings.HasSuffix(h, e) && h != e && !strings.HasSuffix(h, "."+e) && allowed {
			t.Errorf("url %q host %q is a look-alike of %q but allowed", raw, h, entry)
		}
		if MatchHost("evil-"+h, h) || MatchHost("evil"+h, h) {
			t.Errorf("host %q: a prefixed look-alike matches", h)
		}
	})
}
