// Package mailtest starts Debian's Dovecot as a throwaway IMAP server for tests: one user with
// a plaintext password, a Maildir in a temporary directory, its own configuration file (no
// system configuration is read), plaintext IMAP on a free loopback port and its log in the
// temporary directory. The server is stopped and the directory removed when the test ends.
//
// Under root, Dovecot's mail processes run as nobody (Dovecot refuses mail access as uid 0)
// and the directory is handed to that account; otherwise everything runs as the caller.
// Mail is delivered with IMAP APPEND, so the server, not the test, writes the Maildir.
package mailtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// User and Password are the throwaway account's credentials.
const (
	User     = "alice"
	Password = "wonderland-test-password"
)

// startTimeout bounds how long the server may take to accept connections.
const startTimeout = 20 * time.Second

// Server is a running Dovecot.
type Server struct {
	Dir    string // the temporary directory holding configuration, mail, state and log
	Host   string // always 127.0.0.1
	Port   int    // the IMAP port (plaintext)
	cmd    *exec.Cmd
	waited <-chan error // the result of cmd.Wait
	home   string       // the user's home; the Maildir is home/Maildir
}

// Binary returns the path of the dovecot binary, or "" when it is not installed.
func Binary() string {
	if p, err := exec.LookPath("dovecot"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/dovecot"); err == nil {
		return "/usr/sbin/dovecot"
	}
	return ""
}

// Start starts a Dovecot for t, or skips t when Dovecot is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("dovecot is not installed (looked in PATH and /usr/sbin); .ci/run installs it with the dovecot-imapd package.")
	}
	s, err := start(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

func start(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "buddi-dovecot-")
	if err != nil {
		return nil, fmt.Errorf("mailtest: make the temporary directory: %w", err)
	}
	// Dovecot's unprivileged processes must be able to walk to their sockets and the mail.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mailtest: open up %s: %w", dir, err)
	}
	s := &Server{Dir: dir, Host: "127.0.0.1", home: filepath.Join(dir, "home")}
	fail := func(err error) (*Server, error) {
		s.stop()
		return nil, err
	}
	uid, gid := os.Getuid(), os.Getgid()
	self, err := user.Current()
	if err != nil {
		return fail(fmt.Errorf("mailtest: who am I: %w", err))
	}
	internal := self.Username
	if uid == 0 {
		nobody, err := user.Lookup("nobody")
		if err != nil {
			return fail(fmt.Errorf("mailtest: running as root needs the nobody account for the mail processes: %w", err))
		}
		uid, _ = strconv.Atoi(nobody.Uid)
		gid, _ = strconv.Atoi(nobody.Gid)
		internal = "dovecot"
	}
	for _, d := range []string{"run", "state", s.home} {
		p := d
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, d)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fail(fmt.Errorf("mailtest: make %s: %w", p, err))
		}
	}
	if err := os.Chown(s.home, uid, gid); err != nil {
		return fail(fmt.Errorf("mailtest: hand %s to the mail account: %w", s.home, err))
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	s.Port = port
	users := fmt.Sprintf("%s:{PLAIN}%s:%d:%d::%s::\n", User, Password, uid, gid, s.home)
	if err := os.WriteFile(filepath.Join(dir, "users"), []byte(users), 0o644); err != nil {
		return fail(fmt.Errorf("mailtest: write the users file: %w", err))
	}
	conf := s.config(internal, uid)
	confPath := filepath.Join(dir, "dovecot.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return fail(fmt.Errorf("mailtest: write the configuration: %w", err))
	}
	cmd := exec.Command(bin, "-F", "-c", confPath)
	out, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return fail(fmt.Errorf("mailtest: create the stderr log: %w", err))
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("mailtest: start dovecot: %w", err))
	}
	s.cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			c.Close()
			s.waited = exited
			return s, nil
		}
		select {
		case werr := <-exited:
			s.cmd = nil
			return fail(fmt.Errorf("mailtest: dovecot exited before listening (%v): %s", werr, s.logs()))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.waited = exited
			return fail(fmt.Errorf("mailtest: dovecot did not listen on %s within %s: %s", s.Addr(), startTimeout, s.logs()))
		}
	}
}

func (s *Server) config(internal string, uid int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "base_dir = %s\nstate_dir = %s\n", filepath.Join(s.Dir, "run"), filepath.Join(s.Dir, "state"))
	fmt.Fprintf(&b, "log_path = %s\ninfo_log_path = %[1]s\ndebug_log_path = %[1]s\n", filepath.Join(s.Dir, "dovecot.log"))
	b.WriteString("protocols = imap\nlisten = 127.0.0.1\nssl = no\ndisable_plaintext_auth = no\n")
	b.WriteString("auth_mechanisms = plain login\nmail_location = maildir:~/Maildir\n")
	fmt.Fprintf(&b, "default_internal_user = %s\n", internal)
	if os.Getuid() != 0 {
		// One account for everything: Dovecot cannot change users or chown to another group.
		fmt.Fprintf(&b, "default_login_user = %s\nfirst_valid_uid = %d\n", internal, uid)
		if g, err := user.LookupGroupId(strconv.Itoa(os.Getgid())); err == nil {
			fmt.Fprintf(&b, "default_internal_group = %s\nfirst_valid_gid = %d\n", g.Name, os.Getgid())
		}
	}
	fmt.Fprintf(&b, "passdb {\n  driver = passwd-file\n  args = scheme=PLAIN %s\n}\n", filepath.Join(s.Dir, "users"))
	fmt.Fprintf(&b, "userdb {\n  driver = passwd-file\n  args = %s\n}\n", filepath.Join(s.Dir, "users"))
	fmt.Fprintf(&b, "service imap-login {\n  chroot =\n  inet_listener imap {\n    address = 127.0.0.1\n    port = %d\n  }\n  inet_listener imaps {\n    port = 0\n  }\n}\n", s.Port)
	b.WriteString("service anvil {\n  chroot =\n}\n")
	return b.String()
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Maildir is the user's Maildir, whose root is the INBOX.
func (s *Server) Maildir() string { return filepath.Join(s.home, "Maildir") }

func (s *Server) logs() string {
	var parts []string
	for _, f := range []string{"stderr.log", "dovecot.log"} {
		if b, err := os.ReadFile(filepath.Join(s.Dir, f)); err == nil && len(b) > 0 {
			parts = append(parts, f+": "+strings.TrimSpace(string(b)))
		}
	}
	return strings.Join(parts, "; ")
}

// Logs returns Dovecot's log so far, for a failing test's message.
func (s *Server) Logs() string { return s.logs() }

func (s *Server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.waited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.waited
		}
		s.cmd = nil
	}
	_ = os.RemoveAll(s.Dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("mailtest: find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Dial logs in as [User] and returns the client; the test closes it.
func (s *Server) Dial(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatalf("mailtest: dial %s: %v", s.Addr(), err)
	}
	if err := c.Login(User, Password).Wait(); err != nil {
		c.Close()
		t.Fatalf("mailtest: log in: %v", err)
	}
	return c
}

// Message is a small RFC 5322 message for [Server.Deliver].
type Message struct {
	From      string    // the From header
	To        string    // the To header
	Subject   string    // the Subject header
	MessageID string    // the Message-ID header, angle brackets included
	Body      string    // the text body; lines end in \n and are sent with CRLF
	Date      time.Time // the Date header; zero means 2 January 2026
}

// Bytes renders m with CRLF line ends.
func (m Message) Bytes() []byte {
	date := m.Date
	if date.IsZero() {
		date = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	h := []string{
		"From: " + m.From, "To: " + m.To, "Subject: " + m.Subject,
		"Date: " + date.Format(time.RFC1123Z), "Message-ID: " + m.MessageID,
		"MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
	}
	return []byte(strings.Join(h, "\r\n") + "\r\n\r\n" + strings.ReplaceAll(m.Body, "\n", "\r\n") + "\r\n")
}

// Deliver appends m to the user's INBOX with no flags (unread) and returns its UID.
func (s *Server) Deliver(t testing.TB, m Message) imap.UID {
	t.Helper()
	return s.DeliverAll(t, []Message{m})[0]
}

// DeliverAll appends msgs to the INBOX in order over one connection, each unread, and
// returns their UIDs.
func (s *Server) DeliverAll(t testing.TB, msgs []Message) []imap.UID {
	t.Helper()
	c := s.Dial(t)
	defer c.Close()
	uids := make([]imap.UID, 0, len(msgs))
	for _, m := range msgs {
		uids = append(uids, appendOne(t, c, m))
	}
	return uids
}

func appendOne(t testing.TB, c *imapclient.Client, m Message) imap.UID {
	t.Helper()
	raw := m.Bytes()
	cmd := c.Append("INBOX", int64(len(raw)), nil)
	if _, err := cmd.Write(raw); err != nil {
		t.Fatalf("mailtest: append: %v", err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatalf("mailtest: append: %v", err)
	}
	data, err := cmd.Wait()
	if err != nil {
		t.Fatalf("mailtest: append: %v", err)
	}
	return data.UID
}

// Flags returns the flags of the INBOX message uid, read with EXAMINE (which changes nothing).
func (s *Server) Flags(t testing.TB, uid imap.UID) []imap.Flag {
	t.Helper()
	c := s.Dial(t)
	defer c.Close()
	if _, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatalf("mailtest: examine INBOX: %v", err)
	}
	msgs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{Flags: true}).Collect()
	if err != nil {
		t.Fatalf("mailtest: fetch flags of %d: %v", uid, err)
	}
	if len(msgs) != 1 {
		t.Fatalf("mailtest: message %d not found", uid)
	}
	return msgs[0].Flags
}

// ResetINBOX throws away the INBOX's UID list and indexes, so that Dovecot gives the INBOX a
// new UIDVALIDITY at its next SELECT (as a server does when it rebuilds a mailbox), and
// removes its messages. Call it with no session open.
func (s *Server) ResetINBOX(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(s.Maildir())
	if err != nil {
		t.Fatalf("mailtest: read the Maildir: %v", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "cur" || name == "new" || name == "tmp":
			files, _ := os.ReadDir(filepath.Join(s.Maildir(), name))
			for _, f := range files {
				if err := os.Remove(filepath.Join(s.Maildir(), name, f.Name())); err != nil {
					t.Fatalf("mailtest: reset the INBOX: %v", err)
				}
			}
		case name == "dovecot-uidlist" || strings.HasPrefix(name, "dovecot.index"):
			if err := os.Remove(filepath.Join(s.Maildir(), name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("mailtest: reset the INBOX: %v", err)
			}
		}
	}
}

// Status returns the INBOX's UIDVALIDITY and UIDNEXT.
func (s *Server) Status(t testing.TB) (uidValidity uint32, uidNext imap.UID) {
	t.Helper()
	c := s.Dial(t)
	defer c.Close()
	d, err := c.Status("INBOX", &imap.StatusOptions{UIDValidity: true, UIDNext: true}).Wait()
	if err != nil {
		t.Fatalf("mailtest: status INBOX: %v", err)
	}
	return d.UIDValidity, d.UIDNext
}
