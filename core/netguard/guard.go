// Package netguard is the address guard every request an agent causes goes through: it keeps
// agents on the public internet, away from this machine (the dashboard, the database, the
// preview listener), the owner's network and every address that is no destination.
//
// It refuses, in this order: any scheme but http and https; any port but 80 and 443, before
// any lookup; credentials in the URL; local names (localhost, .local, .internal, .home.arpa,
// .lan and names without a dot); then the request if any address the name resolves to is in
// a loopback, private, link-local, carrier-grade NAT, multicast, reserved or documentation
// range, in IPv4, IPv6, or IPv4 wrapped in IPv6 (mapped, compatible, NAT64, 6to4, Teredo).
//
// The guard is the dialer ([Guard.DialContext]): it resolves the name itself, judges every
// address, and connects to the addresses it approved, by number. No second lookup happens
// between the check and the connection, so a name that changes its answer (DNS rebinding)
// cannot slip a loopback address in. Redirects are walked by hand ([Guard.Follow]), each hop
// through the whole guard, at most [MaxRedirects].
//
// A host is read the way a browser reads it, then judged: IDNA mapping (full-width and other
// Unicode dots, upper case), one trailing dot, and the numeric forms of IPv4 (decimal, octal,
// hexadecimal, short forms such as 127.1) are normalised by the URL standard's own rules; a
// host those rules cannot read is refused, never guessed at.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// MaxRedirects is how many redirects one fetch follows.
const MaxRedirects = 3

// ErrBlocked is what every refusal of the guard matches with errors.Is.
var ErrBlocked = errors.New("blocked")

// BlockedError is a refusal: the target and, in words, why.
type BlockedError struct {
	Target string // the URL or host:port refused, as given
	Reason string // why, e.g. "port 5432 is not 80 or 443"
}

// Error says what was refused and why, in one sentence. A target with a line break or
// another control character in it is quoted, so the sentence stays one line.
func (e *BlockedError) Error() string {
	target := e.Target
	if strings.ContainsFunc(target, unicode.IsControl) {
		target = strconv.Quote(target)
	}
	return fmt.Sprintf("agents may not reach %s: %s", target, e.Reason)
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

func blocked(target, format string, args ...any) error {
	return &BlockedError{Target: target, Reason: fmt.Sprintf(format, args...)}
}

// Guard is the address guard. The zero value is the one to use; its two hooks are for tests
// that must reach a server of their own on loopback under a public name.
type Guard struct {
	// Resolve looks a name up. Default: Go's own resolver (which reads /etc/hosts too; the
	// addresses it returns are judged like any other).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an approved address, "ip:port" with ip a number. Default: a
	// net.Dialer with DialTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// DialTimeout bounds one connection attempt. Default 10 seconds.
	DialTimeout time.Duration
}

// localSuffixes are the names only this machine or the local network answers: the seed's
// list, and .localdomain, the domain /etc/hosts conventionally gives this machine
// (localhost.localdomain).
var localSuffixes = []string{".localhost", ".local", ".internal", ".home.arpa", ".lan", ".localdomain"}

// CheckURL parses raw and judges everything about it that needs no lookup: scheme, port,
// credentials and host. It returns the URL with its host normalised (the form that is
// resolved and dialled).
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL itself is the target already
		}
		return nil, blocked(raw, "not a URL (%v)", err)
	}
	if err := g.checkURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

func (g *Guard) checkURL(u *url.URL) error {
	raw := u.Redacted()
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return blocked(raw, "only http and https are fetched, not %q", u.Scheme)
	}
	if u.Opaque != "" {
		return blocked(raw, "not a URL with a host")
	}
	if err := checkPort(u.Port(), raw); err != nil {
		return err
	}
	if u.User != nil {
		return blocked(raw, "a URL with a user name or password in it is never fetched")
	}
	host, err := Host(u.Hostname())
	if err != nil {
		return blocked(raw, "%v", err)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if r := reason(ip); r != "" {
			return blocked(raw, "%s is %s", ip, r)
		}
	} else if r := localName(host); r != "" {
		return blocked(raw, "%s", r)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	u.Host = host
	u.Scheme = strings.ToLower(u.Scheme)
	return nil
}

func checkPort(port, target string) error {
	if port == "" || port == "80" || port == "443" {
		return nil
	}
	return blocked(target, "port %s is not 80 or 443", port)
}

// Host normalises a URL's host the way a browser does before any lookup: an IP address in
// its standard spelling, or a lower-case ASCII name without a trailing dot. It refuses what
// it cannot read.
func Host(host string) (string, error) {
	if host == "" {
		return "", errors.New("the URL has no host")
	}
	if strings.Contains(host, ":") { // only an IPv6 literal has a colon
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return "", fmt.Errorf("%q is not an IPv6 address", host)
		}
		if ip.Zone() != "" {
			return "", fmt.Errorf("%q is scoped to one of this machine's interfaces", host)
		}
		return ip.Unmap().String(), nil
	}
	if !utf8.ValidString(host) {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	ascii, err := idna.Lookup.ToASCII(host)
	if err != nil || ascii == "" {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	// A name is read once: one whose ASCII form reads otherwise again is refused, not guessed.
	if again, err := idna.Lookup.ToASCII(ascii); err != nil || again != ascii {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	ascii = strings.TrimSuffix(ascii, ".")
	if ascii == "" || strings.HasSuffix(ascii, ".") || strings.Contains(ascii, "..") {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	if endsInNumber(ascii) {
		ip, ok := parseIPv4(ascii)
		if !ok {
			return "", fmt.Errorf("%q is neither a host name nor an IPv4 address", host)
		}
		return ip.String(), nil
	}
	for _, r := range ascii {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return "", fmt.Errorf("%q is not a host name", host)
		}
	}
	return ascii, nil
}

// localName says why a name is this machine's or the local network's, or "".
func localName(host string) string {
	if host == "localhost" {
		return "localhost is this machine"
	}
	for _, s := range localSuffixes {
		// The domain itself too: home.arpa is the home network's (RFC 8375), like its names.
		if strings.HasSuffix(host, s) || host == s[1:] {
			return fmt.Sprintf("%s is a local name (%s)", host, s)
		}
	}
	if !strings.Contains(host, ".") {
		return fmt.Sprintf("%s is a name without a domain, which only the local network resolves", host)
	}
	return ""
}

// endsInNumber is the URL standard's test for a host that must be read as IPv4: its last
// label is all digits, or a hexadecimal number with 0x.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// ipv4Number reads one part of an IPv4 host the URL standard's way: 0x… hexadecimal, 0…
// octal, else decimal; an empty part after a prefix is 0.
func ipv4Number(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// parseIPv4 reads an IPv4 host with one to four parts, the last filling what is left
// (127.1 is 127.0.0.1; 2130706433 is 127.0.0.1).
func parseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// CheckAddr says why an agent may not reach a, as a *BlockedError, or nil.
func CheckAddr(a netip.Addr) error {
	if r := reason(a); r != "" {
		return blocked(a.String(), "it is %s", r)
	}
	return nil
}

// DialContext is the guard as a dialer for an http.Transport: addr is "host:port". It
// checks the port and the host, resolves the host once, refuses the connection if any of
// its addresses is blocked, and connects to the approved addresses by number, in order.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, blocked(addr, "only TCP is dialled, not %q", network)
	}
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, blocked(addr, "not a host and port (%v)", err)
	}
	if err := checkPort(port, addr); err != nil {
		return nil, err
	}
	ips, err := g.resolve(ctx, h, addr)
	if err != nil {
		return nil, err
	}
	dial := g.Dial
	if dial == nil {
		timeout := g.DialTimeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		dial = (&net.Dialer{Timeout: timeout}).DialContext
	}
	var errs []error
	for _, ip := range ips {
		conn, err := dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("connect to %s: %w", addr, errors.Join(errs...))
}

// resolve normalises host, looks it up unless it is a number, and judges every address.
func (g *Guard) resolve(ctx context.Context, h, target string) ([]netip.Addr, error) {
	host, err := Host(h)
	if err != nil {
		return nil, blocked(target, "%v", err)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if r := reason(ip); r != "" {
			return nil, blocked(target, "%s is %s", ip, r)
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	if r := localName(host); r != "" {
		return nil, blocked(target, "%s", r)
	}
	look := g.Resolve
	if look == nil {
		look = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return (&net.Resolver{PreferGo: true}).LookupNetIP(ctx, "ip", host)
		}
	}
	ips, err := look(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("look up %s: no address", host)
	}
	out := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		if r := reason(ip); r != "" {
			return nil, blocked(target, "%s resolves to %s, %s", host, ip, r)
		}
		out = append(out, ip.Unmap())
	}
	return out, nil
}

// Follow sends req through do and walks the redirects by hand: each Location is resolved
// against the URL that answered, judged by the whole guard, and requested with GET (307 and
// 308 keep the method and body when the request can be sent again). At most MaxRedirects
// are followed. req's URL is judged first. do must not follow redirects itself.
func (g *Guard) Follow(req *http.Request, do func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if err := g.checkURL(req.URL); err != nil {
		return nil, err
	}
	for hop := 0; ; hop++ {
		resp, err := do(req)
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return resp, nil
		}
		loc := resp.Header.Get("Location")
		resp.Body.Close()
		if loc == "" {
			return nil, fmt.Errorf("%s answered %d %s without a Location", req.URL.Redacted(), resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		if hop == MaxRedirects {
			return nil, fmt.Errorf("%s redirects more than %d times", req.URL.Redacted(), MaxRedirects)
		}
		next, err := req.URL.Parse(loc)
		if err != nil {
			return nil, blocked(loc, "the redirect's Location is not a URL (%v)", err)
		}
		if err := g.checkURL(next); err != nil {
			return nil, err
		}
		nreq := req.Clone(req.Context())
		nreq.URL, nreq.Host = next, ""
		keep := resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect
		switch {
		case keep && req.Body != nil && req.GetBody == nil:
			return nil, fmt.Errorf("%s redirects a request whose body cannot be sent again", req.URL.Redacted())
		case keep && req.GetBody != nil:
			if nreq.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		case !keep:
			nreq.Method, nreq.Body, nreq.GetBody, nreq.ContentLength = http.MethodGet, nil, nil, 0
			nreq.Header.Del("Content-Type")
		}
		nreq.Header.Del("Authorization") // never carried to another place
		nreq.Header.Del("Cookie")
		req = nreq
	}
}
