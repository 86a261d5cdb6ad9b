package dashboard

import (
	"bufio"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// peerUID returns the local account (uid) that owns the client end of a loopback TCP
// connection, from the kernel's socket tables (/proc/net/tcp and tcp6), or -1 when it cannot
// be told (not loopback, not Linux, the table unreadable). remote is the client's address as
// the server sees it, local the server's.
func peerUID(remote, local string) int {
	ra, err1 := netip.ParseAddrPort(remote)
	la, err2 := netip.ParseAddrPort(local)
	if err1 != nil || err2 != nil || !ra.Addr().IsLoopback() {
		return -1
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if uid := scanTCP(table, ra, la); uid >= 0 {
			return uid
		}
	}
	return -1
}

// scanTCP looks in one socket table for the socket whose local address is the client's and
// whose remote address is the server's, and returns its uid.
func scanTCP(table string, client, server netip.AddrPort) int {
	f, err := os.Open(table)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		l, ok1 := procAddr(fields[1])
		r, ok2 := procAddr(fields[2])
		if !ok1 || !ok2 || !sameEnd(l, client) || !sameEnd(r, server) {
			continue
		}
		if uid, err := strconv.Atoi(fields[7]); err == nil {
			return uid
		}
	}
	return -1
}

// sameEnd compares two socket ends, an IPv4-mapped IPv6 address being its IPv4 one.
func sameEnd(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// procAddr parses the kernel's "ADDR:PORT" hex form: an IPv4 address as one little-endian
// word, an IPv6 one as four.
func procAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i+4 <= len(raw); i += 4 { // each 32-bit word is in host (little-endian) order
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, ok := netip.AddrFromSlice(net.IP(raw))
	return netip.AddrPortFrom(addr, uint16(port)), ok
}
