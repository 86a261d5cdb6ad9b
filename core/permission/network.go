package permission

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// NetworkPolicy says which calls with a network effect may run, in every mode.
type NetworkPolicy string

// The network policies.
const (
	// NetworkAllow lets every network call through to the mode's decision. The default.
	NetworkAllow NetworkPolicy = "allow"
	// NetworkAllowlist lets through a call whose url argument has a host in
	// networkAllowHosts (an entry matches the host and its subdomains), and refuses every
	// other network call, including one without a url.
	NetworkAllowlist NetworkPolicy = "allowlist"
	// NetworkDeny refuses every call with a network effect.
	NetworkDeny NetworkPolicy = "deny"
)

// Valid reports whether p is one of the three policies.
func (p NetworkPolicy) Valid() bool {
	return p == NetworkAllow || p == NetworkAllowlist || p == NetworkDeny
}

// NetworkPolicy returns the effective network policy (the seed's network_policy/1):
// allow when none is set, and deny for a value that is not a policy, so that a typo
// never opens the network.
func (s Settings) NetworkPolicy() NetworkPolicy {
	switch {
	case s.Network == "":
		return NetworkAllow
	case s.Network.Valid():
		return s.Network
	default:
		return NetworkDeny
	}
}

// errNoHost is returned for a URL that names no host.
var errNoHost = errors.New("names no host")

// URLHost returns the normalized host of an absolute URL: lower case, without port or
// trailing dot, an IP address in its canonical form. It refuses anything that parsers
// could read in two ways: white space, control characters and backslashes anywhere, a
// relative or opaque URL, and a host that is neither a DNS name of letters, digits, '-'
// and '_' nor an IP address.
func URLHost(rawURL string) (string, error) {
	h, err := urlHost(rawURL)
	if err != nil {
		return "", fmt.Errorf("permission: url %q: %w", rawURL, err)
	}
	return h, nil
}

// urlHost is URLHost with errors that say only what is wrong.
func urlHost(rawURL string) (string, error) {
	for i := 0; i < len(rawURL); i++ {
		if c := rawURL[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return "", errors.New("holds white space, a control character or a backslash")
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	if !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return "", errNoHost
	}
	h, ok := normalizeHost(u.Hostname())
	if !ok {
		return "", errors.New("has a host that is not a plain DNS name or IP address")
	}
	return h, nil
}

// normalizeHost lower-cases a host name, drops one trailing dot and brackets around an
// IPv6 address, and checks what is left. ok is false for anything else.
func normalizeHost(h string) (string, bool) {
	h = strings.TrimSpace(h)
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.String(), true
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return h, true
}

// MatchHost reports whether host is entry or one of its subdomains: "api.example.com"
// matches "example.com", and "evil-example.com" does not. An IP address matches only
// itself. A host or entry that is not a plain name or address matches nothing.
func MatchHost(host, entry string) bool {
	h, ok := normalizeHost(host)
	if !ok {
		return false
	}
	e, ok := normalizeHost(entry)
	if !ok {
		return false
	}
	if _, err := netip.ParseAddr(e); err == nil {
		return h == e
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return false
	}
	return h == e || strings.HasSuffix(h, "."+e)
}

// HostAllowed reports whether the host of rawURL matches an entry of hosts. A URL that
// URLHost refuses is never allowed.
func HostAllowed(rawURL string, hosts []string) bool {
	h, err := urlHost(rawURL)
	if err != nil {
		return false
	}
	for _, e := range hosts {
		if MatchHost(h, e) {
			return true
		}
	}
	return false
}

// checkNetwork applies the network policy to a call that has a network effect. ok is
// true when the policy lets it through to the mode's decision.
func checkNetwork(c Call, s Settings) (Decision, bool) {
	switch s.NetworkPolicy() {
	case NetworkAllow:
		return Decision{}, true
	case NetworkAllowlist:
		for _, h := range c.Hosts {
			if !hostListed(h, s.NetworkAllowHosts) {
				return blocked(BlockNetwork, "The network policy is allowlist and "+c.name()+" reaches "+quote(h)+
					" (its plugin's network lines), which is not in networkAllowHosts, so it is refused."), false
			}
		}
		raw, present := c.Args["url"]
		str, isString := raw.(string)
		if (!present || (isString && str == "")) && len(c.Hosts) > 0 {
			return Decision{}, true // the declared hosts are all it reaches, and each is listed
		}
		if !present || !isString || str == "" {
			return blocked(BlockNetwork, "The network policy is allowlist and "+c.name()+
				" has no url argument whose host could be checked, so it is refused."), false
		}
		h, err := urlHost(str)
		if err != nil {
			return blocked(BlockNetwork, "The network policy is allowlist and the url "+quote(str)+
				" of "+c.name()+" cannot be checked ("+err.Error()+"), so it is refused."), false
		}
		for _, e := range s.NetworkAllowHosts {
			if MatchHost(h, e) {
				return Decision{}, true
			}
		}
		return blocked(BlockNetwork, "The network policy is allowlist and "+h+
			" is not in networkAllowHosts, so "+c.name()+" is refused."), false
	default:
		return blocked(BlockNetwork, "The network policy is deny, so "+c.name()+
			", which reaches the network, is refused."), false
	}
}

// hostListed reports whether host (as a manifest names it) matches an entry of hosts. A host
// that is not a plain name or address is never listed.
func hostListed(host string, hosts []string) bool {
	for _, e := range hosts {
		if MatchHost(host, e) {
			return true
		}
	}
	return false
}
