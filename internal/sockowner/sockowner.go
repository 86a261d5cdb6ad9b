// Package sockowner tells which local account owns a TCP socket, from the kernel's socket
// tables (/proc/net/tcp and tcp6): the account behind a connection a server accepted, and the
// account listening on an address a client is about to send a credential to.
package sockowner

import (
	"bufio"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Unknown is what the functions answer when the owner cannot be told (no socket table, no
// such socket).
const Unknown = -1

// listen is the kernel's state number for a listening TCP socket.
const listen = "0A"

// PeerUID returns the account that owns the client end of a loopback TCP connection, or
// Unknown. remote is the client's address as the server sees it, local the server's.
func PeerUID(remote, local string) int {
	ra, err1 := netip.ParseAddrPort(remote)
	la, err2 := netip.ParseAddrPort(local)
	if err1 != nil || err2 != nil || !ra.Addr().IsLoopback() {
		return Unknown
	}
	uid := Unknown
	scan(func(l, r netip.AddrPort, state string, owner int) bool {
		if sameEnd(l, ra) && sameEnd(r, la) {
			uid = owner
			return false
		}
		return true
	})
	return uid
}

// ListenerUID returns the account that owns the socket listening on addr (host:port, host an
// IP address), or Unknown when none is found or the tables cannot be read. A socket listening
// on every address (0.0.0.0 or ::) of the port counts as listening on addr.
func ListenerUID(addr string) int {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return Unknown
	}
	uid := Unknown
	scan(func(l, _ netip.AddrPort, state string, owner int) bool {
		if state != listen || l.Port() != ap.Port() {
			return true
		}
		if a := l.Addr().Unmap(); a == ap.Addr().Unmap() || a.IsUnspecified() {
			uid = owner
			return false
		}
		return true
	})
	return uid
}

// Readable reports whether this machine has the socket tables the functions read.
func Readable() bool {
	_, err := os.Stat("/proc/net/tcp")
	return err == nil
}

// scan calls fn with each socket of the tables (local end, remote end, state, owner) until it
// returns false.
func scan(fn func(local, remote netip.AddrPort, state string, uid int) bool) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 8 {
				continue
			}
			l, ok1 := procAddr(fields[1])
			r, ok2 := procAddr(fields[2])
			uid, err := strconv.Atoi(fields[7])
			if !ok1 || !ok2 || err != nil {
				continue
			}
			if !fn(l, r, fields[3], uid) {
				f.Close()
				return
			}
		}
		f.Close()
	}
}

// sameEnd compares two socket ends, an IPv4-mapped IPv6 address being its IPv4 one.
func sameEnd(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// procAddr parses the kernel's "ADDR:PORT" hex form: an IPv4 address as one word, an IPv6 one
// as four, each word in host (little-endian) order.
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
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, ok := netip.AddrFromSlice(net.IP(raw))
	return netip.AddrPortFrom(addr, uint16(port)), ok
}
