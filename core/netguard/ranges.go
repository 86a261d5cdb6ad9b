package netguard

import (
	"encoding/binary"
	"net/netip"
)

// Blocked ranges. An agent may reach the public internet and nothing else: not this machine,
// not the owner's network, not the carrier's, and no address that is not meant to be a
// destination at all.
var (
	blocked4 = prefixes(
		"0.0.0.0/8",          // "this network"
		"10.0.0.0/8",         // private
		"100.64.0.0/10",      // carrier-grade NAT (and the tailnet's addresses)
		"127.0.0.0/8",        // loopback
		"169.254.0.0/16",     // link-local (cloud metadata lives here)
		"172.16.0.0/12",      // private
		"192.0.0.0/24",       // IETF protocol assignments
		"192.0.2.0/24",       // documentation (TEST-NET-1)
		"192.31.196.0/24",    // AS112
		"192.52.193.0/24",    // AMT
		"192.88.99.0/24",     // 6to4 relay anycast
		"192.168.0.0/16",     // private
		"192.175.48.0/24",    // AS112 direct delegation
		"198.18.0.0/15",      // benchmarking
		"198.51.100.0/24",    // documentation (TEST-NET-2)
		"203.0.113.0/24",     // documentation (TEST-NET-3)
		"224.0.0.0/4",        // multicast
		"240.0.0.0/4",        // reserved, and the broadcast address
		"255.255.255.255/32", // broadcast
	)
	blocked6 = prefixes(
		"::/128",         // unspecified
		"::1/128",        // loopback
		"64:ff9b:1::/48", // local-use NAT64
		"100::/64",       // discard-only
		"2001::/23",      // IETF protocol assignments (Teredo, benchmarking, ORCHID and the rest)
		"2001:db8::/32",  // documentation
		"3fff::/20",      // documentation
		"5f00::/16",      // segment routing identifiers
		"fc00::/7",       // unique local (the private ranges of IPv6)
		"fe80::/10",      // link-local
		"fec0::/10",      // site-local, deprecated
		"ff00::/8",       // multicast
	)
	global6 = netip.MustParsePrefix("2000::/3") // the only IPv6 unicast space in use on the internet
	mapped  = netip.MustParsePrefix("::ffff:0:0/96")
	compat  = netip.MustParsePrefix("::/96") // IPv4-compatible, deprecated
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// reason says why a is no place for an agent to reach, or "" when it is a public address.
// IPv4 wrapped in IPv6 (mapped, NAT64, 6to4) is judged by the IPv4 address inside it.
func reason(a netip.Addr) string {
	if !a.IsValid() {
		return "not an address"
	}
	if a.Zone() != "" {
		return "an address scoped to one of this machine's interfaces"
	}
	if a.Is4() {
		return reason4(a)
	}
	switch {
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsLoopback():
		return "a loopback address (this machine)"
	case mapped.Contains(a):
		return wrapped(a.Unmap())
	case nat64.Contains(a):
		b := a.As16()
		return wrapped(netip.AddrFrom4([4]byte(b[12:16])))
	case compat.Contains(a):
		return "an IPv4-compatible IPv6 address (deprecated; it wraps an IPv4 address)"
	case sixTo4.Contains(a):
		b := a.As16()
		return wrapped(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, p := range blocked6 {
		if p.Contains(a) {
			return describe(p, a)
		}
	}
	if !global6.Contains(a) {
		return "an IPv6 address outside the internet's unicast space"
	}
	return ""
}

func reason4(a netip.Addr) string {
	for _, p := range blocked4 {
		if p.Contains(a) {
			return describe(p, a)
		}
	}
	return ""
}

// wrapped judges the IPv4 address inside an IPv6 one.
func wrapped(v4 netip.Addr) string {
	if r := reason4(v4); r != "" {
		return "an IPv6 address that wraps " + v4.String() + ", " + r
	}
	return ""
}

func describe(p netip.Prefix, a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address (this machine)"
	case a.IsPrivate():
		return "a private address (the owner's network)"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.Is4() && p.Bits() == 10 && binary.BigEndian.Uint32(p.Addr().AsSlice()) == 0x64400000:
		return "a carrier-grade NAT address (also the tailnet's)"
	}
	return "a reserved address (" + p.String() + ")"
}
