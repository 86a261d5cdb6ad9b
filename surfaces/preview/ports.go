package preview

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listeningInodes returns the socket inodes listening on TCP port (IPv4 and IPv6), read
// from /proc/net/tcp{,6}.
func listeningInodes(port int) (map[string]bool, error) {
	out := map[string]bool{}
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
			if !ok || !reachesLoopback(hexAddr) {
				continue // bound elsewhere: the proxy's 127.0.0.1 would reach some other socket
			}
			if p, err := strconv.ParseUint(hexPort, 16, 32); err == nil && int(p) == port {
				out[fields[9]] = true
			}
		}
		file.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Listening is a verified listening socket: which descriptor of which process holds it. A
// later request checks only that the descriptor still names the same socket (one readlink):
// a listening socket never changes its port, and a closed one frees its inode.
type Listening struct {
	Pid  int    // the process holding the socket
	FD   int    // its descriptor
	Link string // "socket:[inode]"
}

// Still reports whether the descriptor still holds the socket.
func (l Listening) Still() bool {
	target, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(l.Pid), "fd", strconv.Itoa(l.FD)))
	return err == nil && target == l.Link
}

// FindListening finds the descriptor by which pid, or a process of the group it leads,
// listens on port.
func FindListening(pid, port int) (Listening, bool, error) {
	inodes, err := listeningInodes(port)
	if err != nil {
		return Listening{}, false, fmt.Errorf("read the listening sockets: %w", err)
	}
	if len(inodes) == 0 {
		return Listening{}, false, nil
	}
	// The process itself first (the usual case), then its group.
	if l, ok := socketAmong(pid, inodes); ok {
		return l, true, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return Listening{}, false, fmt.Errorf("read /proc: %w", err)
	}
	for _, d := range procs {
		p, err := strconv.Atoi(d.Name())
		if err != nil || p == pid || processGroup(p) != pid {
			continue
		}
		if l, ok := socketAmong(p, inodes); ok {
			return l, true, nil
		}
	}
	return Listening{}, false, nil
}

func socketAmong(pid int, inodes map[string]bool) (Listening, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return Listening{}, false
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			n, _ := strconv.Atoi(fd.Name())
			return Listening{Pid: pid, FD: n, Link: target}, true
		}
	}
	return Listening{}, false
}

// reachesLoopback reports whether a socket bound to the address (as /proc/net/tcp{,6}
// spells it) is what a dial of 127.0.0.1 reaches: 127.0.0.1 itself, or every address.
func reachesLoopback(hexAddr string) bool {
	switch strings.ToUpper(hexAddr) {
	case "0100007F", "00000000", // 127.0.0.1, 0.0.0.0
		"00000000000000000000000000000000", // ::
		"0000000000000000FFFF00000100007F": // ::ffff:127.0.0.1
		return true
	}
	return false
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
