package mailtest

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
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
)

// The test Postfix's mail domain and its two mailboxes. Mail for [Address] lands in the
// Dovecot user's INBOX; mail for [BobAddress] lands in a Maildir of Postfix's own, read with
// [SMTP.WaitMail]. Any other recipient is refused at RCPT: other addresses in [Domain] as
// unknown users, other domains as relaying, so no mail leaves the machine.
const (
	Domain     = "buddi.test"
	Address    = User + "@" + Domain
	BobAddress = "bob@" + Domain
)

// deliverTimeout bounds how long a message accepted by Postfix may take to be delivered.
const deliverTimeout = 20 * time.Second

// SMTP is a running Postfix that delivers for [Domain] and accepts plaintext SMTP on a
// loopback port from loopback clients, without authentication or TLS.
type SMTP struct {
	Dir    string                 // the temporary directory holding configuration, queue, mail and log
	Host   string                 // always 127.0.0.1
	Port   int                    // the SMTP port
	cmd    *exec.Cmd              // the master
	waited <-chan error           // the result of cmd.Wait
	master int                    // the master's process id, which is also its process group
	boxes  map[string]string      // address -> Maildir (with trailing slash)
	owner  struct{ uid, gid int } // the account that owns the mail
}

// Postconf returns the path of Postfix's postconf command, or "" when Postfix is not
// installed.
func Postconf() string {
	if p, err := exec.LookPath("postconf"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/postconf"); err == nil {
		return "/usr/sbin/postconf"
	}
	return ""
}

// StartSMTP starts a Postfix for t that delivers [Address] into s's user's Maildir, so the
// mail shows up over IMAP, and [BobAddress] into a Maildir of its own. It skips t when Postfix
// is not installed or the caller is not root (Postfix's master must start as root). Postfix
// is stopped and its directory removed when the test ends, before s is.
func (s *Server) StartSMTP(t testing.TB) *SMTP {
	t.Helper()
	postconf := Postconf()
	if postconf == "" {
		t.Skip("postfix is not installed (looked in PATH and /usr/sbin); .ci/run installs it with the postfix package.")
	}
	if os.Getuid() != 0 {
		t.Skip("the test Postfix needs root (its master starts as root and hands its daemons to the postfix account); .ci/run runs as root with the postfix package installed.")
	}
	var p *SMTP
	var err error
	for try := 0; try < 3; try++ {
		p, err = startPostfix(postconf, s)
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return p
}

// errPortTaken says another process took the free port before the master bound it.
var errPortTaken = errors.New("mailtest: the SMTP port was taken before postfix bound it")

func startPostfix(postconf string, imap *Server) (*SMTP, error) {
	mailOwner, err := user.Lookup("postfix")
	if err != nil {
		return nil, fmt.Errorf("mailtest: Postfix is installed but the postfix account is missing; reinstall the postfix package, which creates it: %w", err)
	}
	postdrop, err := user.LookupGroup("postdrop")
	if err != nil {
		return nil, fmt.Errorf("mailtest: Postfix is installed but the postdrop group is missing; reinstall the postfix package, which creates it: %w", err)
	}
	dir, err := os.MkdirTemp("", "buddi-postfix-")
	if err != nil {
		return nil, fmt.Errorf("mailtest: make the temporary directory: %w", err)
	}
	p := &SMTP{Dir: dir, Host: "127.0.0.1"}
	fail := func(err error) (*SMTP, error) {
		p.stop()
		return nil, err
	}
	if strings.ContainsAny(dir+imap.home, " \t\n#") {
		return fail(fmt.Errorf("mailtest: Postfix's map files cannot hold the path %q or %q (blank or #); set TMPDIR to a plain path", dir, imap.home))
	}
	// The virtual delivery agent runs as the mail's owner and must walk to the Maildirs.
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(fmt.Errorf("mailtest: open up %s: %w", dir, err))
	}
	// Mail is written as the account that owns the Dovecot user's home, so Dovecot can read it.
	fi, err := os.Stat(imap.home)
	if err != nil {
		return fail(fmt.Errorf("mailtest: look at the Dovecot user's home: %w", err))
	}
	st := fi.Sys().(*syscall.Stat_t)
	p.owner.uid, p.owner.gid = int(st.Uid), int(st.Gid)
	if p.owner.uid == 0 {
		return fail(fmt.Errorf("mailtest: the Dovecot user's home %s belongs to root, and Postfix delivers mail as no root; start Dovecot with mailtest.Start", imap.home))
	}
	bobHome := filepath.Join(dir, "bob")
	p.boxes = map[string]string{
		Address:    imap.Maildir() + "/",
		BobAddress: filepath.Join(bobHome, "Maildir") + "/",
	}
	ownerUID, _ := strconv.Atoi(mailOwner.Uid)
	dropGID, _ := strconv.Atoi(postdrop.Gid)
	dirs := []struct {
		path     string
		mode     fs.FileMode
		uid, gid int
	}{
		{"conf", 0o755, 0, 0},
		{"data", 0o700, ownerUID, -1},
		{"queue", 0o755, 0, 0},
		{"queue/pid", 0o755, 0, 0},
		{"queue/maildrop", 0o730, ownerUID, dropGID},
		{"queue/public", 0o710, ownerUID, dropGID},
		{"bob", 0o755, p.owner.uid, p.owner.gid},
	}
	// The queue's own directories, as Postfix's postfix-files lays them out.
	for _, q := range []string{"active", "bounce", "corrupt", "defer", "deferred", "flush", "hold", "incoming", "private", "saved", "trace"} {
		dirs = append(dirs, struct {
			path     string
			mode     fs.FileMode
			uid, gid int
		}{"queue/" + q, 0o700, ownerUID, -1})
	}
	for _, d := range dirs {
		path := filepath.Join(dir, d.path)
		if err := os.Mkdir(path, d.mode); err != nil {
			return fail(fmt.Errorf("mailtest: make %s: %w", path, err))
		}
		if err := os.Chmod(path, d.mode); err != nil { // past the umask
			return fail(fmt.Errorf("mailtest: set the mode of %s: %w", path, err))
		}
		if err := os.Chown(path, d.uid, d.gid); err != nil {
			return fail(fmt.Errorf("mailtest: hand %s to its owner: %w", path, err))
		}
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	p.Port = port
	var boxes strings.Builder
	for addr, box := range p.boxes {
		fmt.Fprintf(&boxes, "%s %s\n", addr, box)
	}
	files := map[string]string{
		"main.cf":        p.mainCF(),
		"master.cf":      p.masterCF(),
		"mailboxes":      boxes.String(),
		"dynamicmaps.cf": "",
	}
	// Postfix rereads a file changed within the last second or so, in case it is being edited,
	// pausing 300 ms each time; dating the files a minute back spares those seconds.
	past := time.Now().Add(-time.Minute)
	for name, body := range files {
		path := filepath.Join(p.conf(), name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return fail(fmt.Errorf("mailtest: write Postfix's %s: %w", name, err))
		}
		if err := os.Chtimes(path, past, past); err != nil {
			return fail(fmt.Errorf("mailtest: date Postfix's %s: %w", name, err))
		}
	}
	// The master runs in the foreground as this process's child, as postfix start-fg runs it,
	// but without the postfix command's script, which reads the system's main.cf (to look for
	// other instances) and checks an installation this directory does not need.
	daemons, err := exec.Command(postconf, "-c", p.conf(), "-h", "daemon_directory").Output()
	if err != nil {
		return fail(fmt.Errorf("mailtest: ask postconf for Postfix's daemon directory: %w", err))
	}
	master := filepath.Join(strings.TrimSpace(string(daemons)), "master")
	cmd := exec.Command(master, "-c", p.conf(), "-s")
	out, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return fail(fmt.Errorf("mailtest: create the stderr log: %w", err))
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	// No Setpgid: the master makes itself a session and process group leader, which a
	// process that already leads a group cannot do. Its daemons join its group.
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("mailtest: start postfix: %w", err))
	}
	p.cmd, p.master = cmd, cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p.waited = exited
	deadline := time.Now().Add(startTimeout)
	for {
		if p.greets() {
			break
		}
		select {
		case werr := <-exited:
			p.cmd = nil
			if portTaken(p.Addr()) { // the master says so to syslog only
				return fail(errPortTaken)
			}
			return fail(fmt.Errorf("mailtest: postfix's master exited before listening (%v; it reports errors met before its log opens to syslog only): %s", werr, p.tail()))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("mailtest: postfix did not greet on %s within %s: %s", p.Addr(), startTimeout, p.tail()))
		}
	}
	return p, nil
}

// portTaken reports whether another process listens on addr.
func portTaken(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return true
	}
	l.Close()
	return false
}

func (p *SMTP) conf() string { return filepath.Join(p.Dir, "conf") }

// greets reports whether this Postfix answers on its port: another process that took the
// port would not greet with this host name.
func (p *SMTP) greets() bool {
	c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return false
	}
	_, _ = c.Write([]byte("QUIT\r\n"))
	return strings.HasPrefix(line, "220 mx."+Domain+" ")
}

func (p *SMTP) mainCF() string {
	var b strings.Builder
	set := func(name, value string) { fmt.Fprintf(&b, "%s = %s\n", name, value) }
	set("compatibility_level", "3.6")
	// Everything Postfix reads or writes is in the temporary directory.
	set("config_directory", p.conf())
	set("meta_directory", p.conf())
	set("queue_directory", filepath.Join(p.Dir, "queue"))
	set("data_directory", filepath.Join(p.Dir, "data"))
	set("maillog_file", filepath.Join(p.Dir, "maillog"))
	set("maillog_file_prefixes", p.Dir)
	set("mail_owner", "postfix")
	set("setgid_group", "postdrop")
	// Loopback only, and no look-ups of names: nothing leaves the machine.
	set("inet_interfaces", "127.0.0.1")
	set("inet_protocols", "ipv4")
	set("myhostname", "mx."+Domain)
	set("mydomain", Domain)
	set("myorigin", Domain)
	set("mydestination", "")
	set("mynetworks", "127.0.0.0/8")
	set("relay_domains", "")
	set("smtpd_peername_lookup", "no")
	set("smtp_dns_support_level", "disabled")
	set("smtp_host_lookup", "native")
	set("lmtp_host_lookup", "native")
	set("default_transport", "error:the test Postfix delivers no mail off the machine")
	set("relay_transport", "error:the test Postfix delivers no mail off the machine")
	// Mail for other domains is refused at RCPT, from loopback clients too (not an open relay):
	// the relay restrictions leave out permit_mynetworks, so mynetworks grants no relaying.
	set("smtpd_relay_restrictions", "reject_unauth_destination")
	set("local_recipient_maps", "")
	set("alias_maps", "")
	set("alias_database", "")
	set("biff", "no")
	set("append_dot_mydomain", "no")
	// The virtual delivery agent writes the mailboxes as the mail's owner, in Maildir format.
	set("virtual_mailbox_domains", Domain)
	set("virtual_mailbox_base", "/")
	set("virtual_mailbox_maps", "texthash:"+filepath.Join(p.conf(), "mailboxes"))
	set("virtual_uid_maps", fmt.Sprintf("static:%d", p.owner.uid))
	set("virtual_gid_maps", fmt.Sprintf("static:%d", p.owner.gid))
	set("virtual_minimum_uid", strconv.Itoa(p.owner.uid))
	return b.String()
}

func (p *SMTP) masterCF() string {
	// service type private unpriv chroot wakeup maxproc command; nothing is chrooted.
	return fmt.Sprintf(`127.0.0.1:%d inet n - n - - smtpd
pickup    unix  n - n 60   1 pickup
cleanup   unix  n - n -    0 cleanup
qmgr      unix  n - n 300  1 qmgr
rewrite   unix  - - n -    - trivial-rewrite
bounce    unix  - - n -    0 bounce
defer     unix  - - n -    0 bounce
trace     unix  - - n -    0 bounce
verify    unix  - - n -    1 verify
flush     unix  n - n 1000? 0 flush
proxymap  unix  - - n -    - proxymap
showq     unix  n - n -    - showq
error     unix  - - n -    - error
retry     unix  - - n -    - error
discard   unix  - - n -    - discard
anvil     unix  - - n -    1 anvil
virtual   unix  - n n -    - virtual
postlog   unix-dgram n - n - 1 postlogd
`, p.Port)
}

// Addr is the server's host:port.
func (p *SMTP) Addr() string { return net.JoinHostPort(p.Host, strconv.Itoa(p.Port)) }

// Logs returns the last lines of Postfix's log, for a failing test's message.
func (p *SMTP) Logs() string { return p.tail() }

func (p *SMTP) tail() string {
	var parts []string
	for _, f := range []string{"stderr.log", "maillog"} {
		b, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil || len(b) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) > 30 {
			lines = lines[len(lines)-30:]
		}
		parts = append(parts, f+":\n"+strings.Join(lines, "\n"))
	}
	if len(parts) == 0 {
		return "(Postfix logged nothing)"
	}
	return strings.Join(parts, "\n")
}

// Drain waits until Postfix's queue is empty, so that every message it accepted has been
// delivered (or bounced), and fails t if that takes too long.
func (p *SMTP) Drain(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(deliverTimeout)
	for {
		n, err := p.queued()
		if err != nil {
			t.Fatalf("mailtest: look at Postfix's queue: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailtest: %d messages still in Postfix's queue after %s: %s", n, deliverTimeout, p.tail())
		}
		time.Sleep(20 * time.Millisecond) // polling the queue; Postfix gives no signal
	}
}

// queued counts the messages in the queue that are not yet delivered or bounced.
func (p *SMTP) queued() (int, error) {
	n := 0
	for _, q := range []string{"maildrop", "incoming", "active", "deferred", "hold"} {
		err := filepath.WalkDir(filepath.Join(p.Dir, "queue", q), func(_ string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // moved on while we looked
			}
			if err != nil {
				return err
			}
			if !d.IsDir() {
				n++
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// WaitMail waits until the Maildir of address ([Address] or [BobAddress]) holds at least n
// messages and returns them all as delivered (headers Postfix added included), those in new/
// before those in cur/, each by file name. It fails t if they do not arrive in time.
func (p *SMTP) WaitMail(t testing.TB, address string, n int) [][]byte {
	t.Helper()
	box, ok := p.boxes[address]
	if !ok {
		t.Fatalf("mailtest: %s has no mailbox on the test Postfix; use mailtest.Address or mailtest.BobAddress", address)
	}
	deadline := time.Now().Add(deliverTimeout)
	for {
		msgs, err := readMaildir(box)
		if err != nil {
			t.Fatalf("mailtest: read the Maildir of %s: %v", address, err)
		}
		if len(msgs) >= n {
			return msgs
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailtest: %s has %d messages after %s, want %d: %s", address, len(msgs), deliverTimeout, n, p.tail())
		}
		time.Sleep(20 * time.Millisecond) // polling the Maildir; Postfix gives no signal
	}
}

// readMaildir reads the messages in a Maildir's new and cur. Dovecot moves a message from new
// to cur when it sees it, so a message that vanishes between listing and reading is looked
// for again.
func readMaildir(box string) ([][]byte, error) {
	for try := 0; try < 10; try++ {
		var msgs [][]byte
		vanished := false
		for _, sub := range []string{"new", "cur"} {
			entries, err := os.ReadDir(filepath.Join(box, sub))
			if errors.Is(err, fs.ErrNotExist) {
				continue // nothing delivered yet
			}
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(box, sub, e.Name()))
				if errors.Is(err, fs.ErrNotExist) {
					vanished = true
					break
				}
				if err != nil {
					return nil, err
				}
				msgs = append(msgs, b)
			}
		}
		if !vanished {
			return msgs, nil
		}
	}
	return nil, errors.New("messages kept moving while being read")
}

// stop stops the master, waits for it and its daemons to exit (killing them if they linger),
// and removes the directory. It sends the master SIGTERM, as postfix stop does (the master
// passes it on to its daemons), and waits for the master itself rather than polling with
// postfix stop's one-second sleeps.
func (p *SMTP) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.waited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.master, syscall.SIGKILL)
			_ = p.cmd.Process.Kill()
			<-p.waited
		}
		p.cmd = nil
	}
	if p.master > 0 {
		// The master leads its own process group, and its daemons end with it.
		deadline := time.Now().Add(5 * time.Second)
		for liveInGroup(p.master) > 0 {
			if time.Now().After(deadline) {
				_ = syscall.Kill(-p.master, syscall.SIGKILL)
				break
			}
			time.Sleep(10 * time.Millisecond) // polling for exits of processes that are not our children
		}
		p.master = 0
	}
	_ = os.RemoveAll(p.Dir)
}

// liveInGroup counts the processes of the process group pgid that still run. An exited
// daemon of a stopped master is a zombie until init reaps it, which can take a second or two,
// and holds no files, so it does not count.
func liveInGroup(pgid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if syscall.Kill(-pgid, 0) == nil {
			return 1
		}
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces, so read from the last ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}
