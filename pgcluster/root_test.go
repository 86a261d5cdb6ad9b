package pgcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// As root the server runs as the postgres account, which must not read the roles' passwords.
func TestPasswordFilesHiddenFromServerAccount(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the server runs under another account only when buddi is root")
	}
	c := newTestCluster(t, filepath.Join(t.TempDir(), "pg"))
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	if c.runAs == nil {
		t.Fatal("as root, the server does not run as another account")
	}
	for _, role := range []string{Owner, App} {
		cat := exec.Command("/bin/cat", c.PasswordFile(role))
		cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: c.runAs.uid, Gid: c.runAs.gid}}
		if out, err := cat.CombinedOutput(); err == nil {
			t.Errorf("the %s account read %s: %q", c.runAs.name, c.PasswordFile(role), out)
		}
	}
}

// Inside the cluster's directory, which the server's account owns, a link where the socket
// directory belongs is refused, and what it points at is left as it was (as root, a chown
// through it would hand root's directory to that account).
func TestPrepareRefusesLinkedSocketDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	target := filepath.Join(base, "precious")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(target)
	dir := filepath.Join(base, "pg")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "run")); err != nil {
		t.Fatal(err)
	}
	c := newTestCluster(t, dir)
	if err := c.Start(startCtx(t)); err == nil {
		t.Fatal("started with the socket directory a link")
	}
	after, _ := os.Stat(target)
	if after.Mode() != before.Mode() || after.Sys().(*syscall.Stat_t).Uid != before.Sys().(*syscall.Stat_t).Uid {
		t.Errorf("the link's target changed: %v uid %d, was %v uid %d", after.Mode(), after.Sys().(*syscall.Stat_t).Uid,
			before.Mode(), before.Sys().(*syscall.Stat_t).Uid)
	}
}
