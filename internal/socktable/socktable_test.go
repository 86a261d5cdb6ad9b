package socktable_test

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"buddi/internal/socktable"
)

func TestPeerAndListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := socktable.ListenerUID(l.Addr().String()); got != os.Getuid() {
		t.Errorf("ListenerUID = %d, want %d", got, os.Getuid())
	}
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := socktable.PeerUID(s.RemoteAddr().String(), s.LocalAddr().String()); got != os.Getuid() {
		t.Errorf("PeerUID = %d, want %d", got, os.Getuid())
	}
	if got := socktable.PeerUID("192.0.2.1:1234", s.LocalAddr().String()); got != socktable.Unknown {
		t.Errorf("PeerUID of a remote address = %d, want Unknown", got)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := free.Addr().String()
	free.Close()
	if got := socktable.ListenerUID(addr); got != socktable.Unknown {
		t.Errorf("ListenerUID of a closed port = %d, want Unknown", got)
	}
}

// A port held by another account is told apart: a process run as uid 65534 listens, and
// ListenerUID names that account.
func TestListenerOfAnotherAccount(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("switching to another account needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "socktable-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := dir + "/listener"
	if out, err := exec.Command("cp", self, bin).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.Chmod(dir, 0o755)
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^$")
	cmd.Env = []string{"SOCKOWNER_LISTEN=1"}
	out, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	addr := strings.TrimSpace(string(buf[:n]))
	if got := socktable.ListenerUID(addr); got != 65534 {
		t.Errorf("ListenerUID(%s) = %d, want 65534", addr, got)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("SOCKOWNER_LISTEN") == "1" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString(l.Addr().String() + "\n")
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
