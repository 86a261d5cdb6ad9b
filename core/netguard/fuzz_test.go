package netguard

import (
	"net/netip"
	"testing"
)

// Whatever the URL, the guard either refuses it or returns one whose every part it allows:
// http or https, port 80, 443 or none, no credentials, a host in its normal form that is a
// public address or a public name.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "http://2130706433/", "http://0x7f.1/", "http://127。0。0。1/", "http://[::ffff:127.0.0.1]/",
		"http://a@b@example.com/", "http://example.com%2f@127.0.0.1/", "http://bücher.example./", "https://[64:ff9b::a9fe:a9fe]:443/",
		"http://%31%32%37.0.0.1/", "http://0177.1/", "HTTP://EXAMPLE.COM:80", "http://[fe80::1%25en0]/", "http://１２７.1/",
	} {
		f.Add(s)
	}
	var g Guard
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := g.CheckURL(raw)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("%q: scheme %q", raw, u.Scheme)
		}
		if p := u.Port(); p != "" && p != "80" && p != "443" {
			t.Fatalf("%q: port %q", raw, p)
		}
		if u.User != nil {
			t.Fatalf("%q: credentials", raw)
		}
		host := u.Hostname()
		again, err := Host(host)
		if err != nil || again != host {
			t.Fatalf("%q: host %q is not in its normal form (%q, %v)", raw, host, again, err)
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			if err := CheckAddr(ip); err != nil {
				t.Fatalf("%q: %v", raw, err)
			}
		} else if r := localName(host); r != "" || endsInNumber(host) {
			t.Fatalf("%q: host %q accepted (%s)", raw, host, r)
		}
	})
}

// Any host the IPv4 reader accepts is read the same way twice, and its number survives a
// round trip through its dotted form.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"127.1", "0x7f000001", "017700000001", "1.2.3.4", "example.com", "a.0x1", "4294967295", "0.0.0.0."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		out, err := Host(h)
		if err != nil {
			return
		}
		again, err := Host(out)
		if err != nil || again != out {
			t.Fatalf("Host(%q) = %q, then %q, %v", h, out, again, err)
		}
	})
}
