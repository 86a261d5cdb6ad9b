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
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// connection reaches, each with that connection's address, from /proc/net/tcp{,6}.
func inodes(port int) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(file)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			hexAddr, hexPort, ok := strings.Cut(fields[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseUint(hexPort, 16, 32); err != nil || int(p) != port {
				continue
			}
			if ip := reachedAt(hexAddr); ip != nil {
				out[fields[9]] = net.JoinHostPort(ip.String(), strconv.Itoa(port))
			}
		}
		file.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reachedAt is the loopback address at which a connection reaches a socket bound to the
// address /proc/net/tcp{,6} spells as hexAddr (32-bit words in the machine's byte order), or
// nil when no loopback connection is sure to reach it.
func reachedAt(hexAddr string) net.IP {
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || len(raw) != net.IPv4len && len(raw) != net.IPv6len {
		return nil
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	switch {
	case ip.Equal(net.IPv4zero): // every IPv4 address, or a v4-mapped socket bound to all of them
		return net.IPv4(127, 0, 0, 1)
	case ip.Equal(net.IPv6unspecified): // every IPv6 address: perhaps IPv6-only, so its own loopback
		return net.IPv6loopback
	case ip.IsLoopback(): // 127.0.0.0/8 (v4-mapped too) or ::1: that very address
		if v4 := ip.To4(); v4 != nil {
			return v4
		}
		return ip
	}
	return nil
}

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
