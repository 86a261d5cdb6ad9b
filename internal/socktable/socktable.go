// Package socktable reads the kernel's TCP socket tables (/proc/net/tcp and tcp6): every
// socket with its ends, state, owner and inode (Each), the account behind a connection a
// server accepted (PeerUID), and the account listening on an address a client is about to
// send a credential to (ListenerUID).
package socktable

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
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
	scan(func(s Socket) bool {
		if sameEnd(s.Local, ra) && sameEnd(s.Remote, la) {
			uid = s.UID
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
	scan(func(s Socket) bool {
		if !s.Listening || s.Local.Port() != ap.Port() {
			return true
		}
		if a := s.Local.Addr().Unmap(); a == ap.Addr().Unmap() || a.IsUnspecified() {
			uid = s.UID
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

// Socket is one TCP socket of the kernel's tables.
type Socket struct {
	Local, Remote netip.AddrPort // its two ends (Remote is the zero port for a listener)
	Listening     bool           // in the LISTEN state
	UID           int            // the account that owns it
	Inode         string         // its inode number (/proc/<pid>/fd names it "socket:[<inode>]")
}

// Each calls fn with each socket of /proc/net/tcp and /proc/net/tcp6 until it returns
// false. A table that does not exist is skipped; one that cannot be read is an error.
func Each(fn func(Socket) bool) error {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			l, ok1 := procAddr(fields[1])
			r, ok2 := procAddr(fields[2])
			uid, err := strconv.Atoi(fields[7])
			if !ok1 || !ok2 || err != nil {
				continue
			}
			if !fn(Socket{Local: l, Remote: r, Listening: fields[3] == listen, UID: uid, Inode: fields[9]}) {
				f.Close()
				return nil
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// scan is Each with its error dropped: the owner is then Unknown.
func scan(fn func(Socket) bool) { _ = Each(fn) }

// sameEnd compares two socket ends, an IPv4-mapped IPv6 address being its IPv4 one.
func sameEnd(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// procAddr parses the kernel's "ADDR:PORT" hex form: an IPv4 address as one 32-bit word, an
// IPv6 one as four, each word in the machine's byte order.
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
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, ok := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(addr, uint16(port)), ok
}
