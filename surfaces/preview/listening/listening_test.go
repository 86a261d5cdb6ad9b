package listening_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"

	"buddi/surfaces/preview/listening"
)

// listen opens a listener of this process on network and address, IPv6-only when v6only.
func listen(t *testing.T, network, addr string, v6only bool) (int, func()) {
	t.Helper()
	var lc net.ListenConfig
	if v6only {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 1)
			}); err != nil {
				return err
			}
			return serr
		}
	}
	l, err := lc.Listen(context.Background(), network, addr)
	if err != nil {
		t.Fatalf("listen on %s %s: %v", network, addr, err)
	}
	return l.Addr().(*net.TCPAddr).Port, func() { l.Close() }
}

// Each binding is found with the address that reaches that very socket: 127.0.0.1 for the
// IPv4 ones, [::1] for a socket on every IPv6 address (IPv6-only or not: /proc cannot tell),
// its own address for another loopback one.
func TestFindGivesTheSocketsOwnAddress(t *testing.T) {
	cases := []struct {
		network, addr string
		v6only        bool
		want          string // the host reached, "" for none
	}{
		{"tcp4", "127.0.0.1:0", false, "127.0.0.1"},
		{"tcp4", "0.0.0.0:0", false, "127.0.0.1"},
		{"tcp4", "127.0.0.2:0", false, "127.0.0.2"},
		{"tcp6", "[::]:0", false, "::1"},
		{"tcp6", "[::]:0", true, "::1"},
		{"tcp6", "[::1]:0", false, "::1"},
	}
	for _, c := range cases {
		port, closeIt := listen(t, c.network, c.addr, c.v6only)
		s, ok, err := listening.Find(os.Getpid(), port)
		if err != nil || !ok || s.Addr != net.JoinHostPort(c.want, strconv.Itoa(port)) || !s.Still() {
			t.Errorf("%s %s v6only=%v: %+v %v %v, want %s", c.network, c.addr, c.v6only, s, ok, err, c.want)
		}
		if _, ok, _ := listening.Find(1, port); ok {
			t.Errorf("%s %s: pid 1 does not hold our socket", c.network, c.addr)
		}
		closeIt()
		if s.Still() {
			t.Errorf("%s %s: a closed listener still holds its descriptor", c.network, c.addr)
		}
		if _, ok, _ := listening.Find(os.Getpid(), port); ok {
			t.Errorf("%s %s: a closed listener still counts", c.network, c.addr)
		}
	}
}

// A socket on an address off loopback proves nothing about loopback.
func TestFindSkipsAddressesOffLoopback(t *testing.T) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ip, _, err := net.ParseCIDR(a.String())
		if err != nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		network := "tcp4"
		if ip.To4() == nil {
			network = "tcp6"
		}
		port, closeIt := listen(t, network, net.JoinHostPort(ip.String(), "0"), false)
		if s, ok, _ := listening.Find(os.Getpid(), port); ok {
			t.Errorf("a socket on %s passed, reached at %s", ip, s.Addr)
		}
		closeIt()
		return
	}
	t.Log("no address off loopback on this machine: nothing to try")
}
