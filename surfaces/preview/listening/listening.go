// Package listening proves that a process listens on a loopback port, from /proc (Linux): the
// socket listening on the port is found in /proc/net/tcp{,6}, and its inode among the
// descriptors of the process or of the process group it leads. A process that merely says
// it listens on a port (because another server does) does not pass.
//
// The proof comes with the address to connect to: the socket's own. A socket bound to every
// IPv4 address or to 127.0.0.1 is reached at 127.0.0.1; one bound to every IPv6 address is
// reached at [::1], since it may have been opened IPv6-only (IPV6_V6ONLY, which /proc does not
// show), and then 127.0.0.1 on its port is free for another server to hold. A socket bound to
// an address off loopback is not a proof.
package listening

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"buddi/internal/socktable"
)

// Socket is a verified listening socket: which descriptor of which process holds it, and the
// address that reaches it. A later check needs only that the descriptor still names the same
// socket (one readlink): a listening socket never changes its address, and a closed one frees
// its inode.
type Socket struct {
	Pid  int    // the process holding the socket
	FD   int    // its descriptor
	Link string // "socket:[inode]"
	Addr string // the loopback address and port that reach it, "127.0.0.1:5173" or "[::1]:5173"
}

// Still reports whether the descriptor still holds the socket.
func (s Socket) Still() bool {
	target, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(s.Pid), "fd", strconv.Itoa(s.FD)))
	return err == nil && target == s.Link
}

// Find finds the descriptor by which pid, or a process of the group it leads, listens on a
// loopback address (or every address) on port, and the address that reaches that socket.
func Find(pid, port int) (Socket, bool, error) {
	inodes, err := inodes(port)
	if err != nil {
		return Socket{}, false, fmt.Errorf("read the listening sockets: %w", err)
	}
	if len(inodes) == 0 {
		return Socket{}, false, nil
	}
	// The process itself first (the usual case), then its group.
	if s, ok := among(pid, inodes); ok {
		return s, true, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return Socket{}, false, fmt.Errorf("read /proc: %w", err)
	}
	for _, d := range procs {
		p, err := strconv.Atoi(d.Name())
		if err != nil || p == pid || processGroup(p) != pid {
			continue
		}
		if s, ok := among(p, inodes); ok {
			return s, true, nil
		}
	}
	return Socket{}, false, nil
}

// inodes returns the inodes of the sockets listening on port at an address a loopback
// connection reaches, each with that connection's address, from the kernel's socket tables.
func inodes(port int) (map[string]string, error) {
	out := map[string]string{}
	err := socktable.Each(func(s socktable.Socket) bool {
		if s.Listening && int(s.Local.Port()) == port {
			if ip, ok := reachedAt(s.Local.Addr()); ok {
				out[s.Inode] = netip.AddrPortFrom(ip, uint16(port)).String()
			}
		}
		return true
	})
	return out, err
}

// reachedAt is the loopback address at which a connection reaches a socket bound to addr, or
// false when no loopback connection is sure to reach it.
func reachedAt(addr netip.Addr) (netip.Addr, bool) {
	switch {
	case addr.Unmap() == netip.IPv4Unspecified(): // every IPv4 address, or a v4-mapped socket bound to all of them
		return netip.AddrFrom4([4]byte{127, 0, 0, 1}), true
	case addr == netip.IPv6Unspecified(): // every IPv6 address: perhaps IPv6-only, so its own loopback
		return netip.IPv6Loopback(), true
	case addr.Unmap().IsLoopback(): // 127.0.0.0/8 (v4-mapped too) or ::1: that very address
		return addr.Unmap(), true
	}
	return netip.Addr{}, false
}

// among finds the descriptor of pid that holds one of inodes' sockets.
func among(pid int, inodes map[string]string) (Socket, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return Socket{}, false
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		inode, ok := strings.CutPrefix(target, "socket:[")
		if !ok {
			continue
		}
		if addr, ok := inodes[strings.TrimSuffix(inode, "]")]; ok {
			n, _ := strconv.Atoi(fd.Name())
			return Socket{Pid: pid, FD: n, Link: target, Addr: addr}, true
		}
	}
	return Socket{}, false
}

// processGroup is pid's process group, or -1 when it cannot be read.
func processGroup(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 3 {
		return -1
	}
	g, err := strconv.Atoi(fields[2])
	if err != nil {
		return -1
	}
	return g
}
