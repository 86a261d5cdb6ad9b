package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// minABI is the oldest Landlock the box accepts: 6 (Linux 6.12) is the first that scopes
// signals and abstract unix sockets to the domain, without which a boxed process could
// signal buddi or reach its abstract sockets.
const minABI = 6

// Landlock access rights, by the ABI that introduced them.
const (
	rightsABI1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	rightsABI2 = rightsABI1 | unix.LANDLOCK_ACCESS_FS_REFER
	rightsABI3 = rightsABI2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	rightsABI5 = rightsABI3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// fileRights are the rights that mean something on a file that is not a directory.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV | unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	// readRights are what every path but the hidden ones and /dev gets: read, list, execute.
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// deviceRights are what the harmless character devices get.
	deviceRights = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// neverRights are refused even where writing is allowed: making device nodes.
	neverRights = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK

	// scopes keep signals and abstract unix sockets inside the domain (ABI 6).
	scopes = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
)

// devices are the character devices a command may use: read and write the null ones and
// its terminal, read the random ones. Nothing else under /dev is granted (the owner's
// terminals in /dev/pts among them).
var devices = map[string]uint64{
	"/dev/null": deviceRights, "/dev/zero": deviceRights, "/dev/full": deviceRights, "/dev/tty": deviceRights,
	"/dev/random": unix.LANDLOCK_ACCESS_FS_READ_FILE, "/dev/urandom": unix.LANDLOCK_ACCESS_FS_READ_FILE,
}

// landlockABI returns the kernel's Landlock ABI version, or an error saying why there is none.
func landlockABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch e {
	case 0:
		return int(v), nil
	case unix.ENOSYS:
		return 0, errors.New("the kernel has no Landlock (it needs Linux 6.12 or later built with CONFIG_SECURITY_LANDLOCK)")
	case unix.EOPNOTSUPP:
		return 0, errors.New("the kernel's Landlock is turned off: add landlock to the lsm= boot parameter")
	}
	return 0, fmt.Errorf("the kernel's Landlock cannot be asked its version: %w", e)
}

// rulesetSize is the part of LandlockRulesetAttr up to and including Scoped, the fields
// this package sets; a kernel too old for a larger struct accepts this one.
const rulesetSize = unsafe.Offsetof(unix.LandlockRulesetAttr{}.Quiet_access_fs)

// createRuleset makes a ruleset handling fs and scoping scoped.
func createRuleset(fs, scoped uint64) (int, error) {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: fs, Scoped: scoped}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), rulesetSize, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// handledRights returns every file system right the kernel knows, so that none is left
// unrestricted: by ABI, plus connecting to unix sockets by path when the kernel has it.
func handledRights(abi int) uint64 {
	r := uint64(rightsABI1)
	if abi >= 2 {
		r = rightsABI2
	}
	if abi >= 3 {
		r = rightsABI3
	}
	if abi >= 5 {
		r = rightsABI5
	}
	if fd, err := createRuleset(r|unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX, 0); err == nil {
		_ = unix.Close(fd)
		r |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return r
}

// ruleset builds the box's Landlock ruleset, to be applied by restrictSelf:
//   - read, list and execute everywhere except under Home, the Hidden paths and /dev: the
//     rule goes on every entry along the way to each of them but that path, and the
//     directories on the way get only the right to be listed;
//   - everything but making device nodes in the workspace, the policy's Writable and the
//     private directories;
//   - the harmless devices of `devices`;
//   - writing the command's stdout and stderr when they are files (developer.start's log),
//     so that /dev/stdout can be opened again;
//   - signals and abstract unix sockets scoped to the domain. Ptrace and /proc/<pid> of
//     processes outside the domain are refused by Landlock itself.
func (b *box) ruleset() (int, error) {
	abi, err := landlockABI()
	if err != nil {
		return -1, err
	}
	if abi < minABI {
		return -1, fmt.Errorf("the kernel's Landlock is ABI %d and the box needs %d (Linux 6.12 or later)", abi, minABI)
	}
	handled := handledRights(abi)
	fd, err := createRuleset(handled, scopes)
	if err != nil {
		return -1, fmt.Errorf("create the ruleset: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = unix.Close(fd)
		}
	}()
	rs := ruleset{fd: fd, handled: handled}

	deny := append(b.hiddenPaths(), "/dev")
	if err := rs.readAllBut("/", deny); err != nil {
		return -1, err
	}
	write := handled &^ neverRights
	for _, k := range b.kept {
		if k.writable {
			if err := rs.add(k.fd, write, false); err != nil {
				return -1, fmt.Errorf("grant the %s %s: %w", k.role, k.real, err)
			}
		}
	}
	for _, d := range privateDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			if err := rs.addPath(d, write, false); err != nil {
				return -1, err
			}
		}
	}
	if b.l.Policy.Namespaces {
		// The box's own /proc, for the id maps of the namespaces its program makes.
		if err := rs.addPath("/proc", unix.LANDLOCK_ACCESS_FS_WRITE_FILE, false); err != nil {
			return -1, err
		}
	}
	for dev, access := range devices {
		if err := rs.addPath(dev, access, true); err != nil {
			return -1, err
		}
	}
	for _, std := range []int{1, 2} {
		var st unix.Stat_t
		if unix.Fstat(std, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			if err := rs.add(std, unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_TRUNCATE, true); err != nil {
				return -1, fmt.Errorf("allow writing the command's output file: %w", err)
			}
		}
	}
	ok = true
	return fd, nil
}

// ruleset is a Landlock ruleset being filled.
type ruleset struct {
	fd      int
	handled uint64
}

// readAllBut grants readRights on every entry of dir except the deny paths (and what is
// under them), walking into the directories that hold one and granting those only the
// right to be listed: names are shown, content is not. Links are skipped (their targets
// are granted or not on their own), and so are entries this account cannot open.
func (rs ruleset) readAllBut(dir string, deny []string) error {
	if err := rs.addPath(dir, unix.LANDLOCK_ACCESS_FS_READ_DIR, true); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // an ancestor this account cannot list: nothing under it is granted
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case holdsAny(p, deny) == exactly:
			continue
		case holdsAny(p, deny) == above:
			if e.IsDir() {
				if err := rs.readAllBut(p, deny); err != nil {
					return err
				}
			}
			continue
		case e.Type()&os.ModeSymlink != 0, !e.IsDir() && !e.Type().IsRegular():
			continue
		}
		if err := rs.addPath(p, readRights, true); err != nil {
			return err
		}
	}
	return nil
}

// relation is how a path stands to a set of paths.
type relation int

const (
	apartFrom relation = iota
	exactly            // the path is one of them
	above              // the path holds one of them
)

// holdsAny says whether p is one of paths, holds one, or neither.
func holdsAny(p string, paths []string) relation {
	r := apartFrom
	for _, d := range paths {
		if p == d {
			return exactly
		}
		if within(d, p) {
			r = above
		}
	}
	return r
}

// addPath grants access beneath path (only the file rights when it is not a directory).
// Links at path are not followed. A path that is missing, or that this account cannot
// open, is skipped when optional is set, and an error otherwise.
func (rs ruleset) addPath(path string, access uint64, optional bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if optional {
			return nil
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		if optional {
			return nil
		}
		return fmt.Errorf("%s is a symbolic link", path)
	}
	if err := rs.add(fd, access, st.Mode&unix.S_IFMT != unix.S_IFDIR); err != nil {
		return fmt.Errorf("grant %s: %w", path, err)
	}
	return nil
}

// add grants access beneath the file fd names.
func (rs ruleset) add(fd int, access uint64, file bool) error {
	if file {
		access &= fileRights
	}
	access &= rs.handled
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// restrictSelf sets no_new_privs (Landlock requires it of a thread without CAP_SYS_ADMIN,
// and it keeps set-user-ID and file capabilities from granting anything after the exec)
// and puts this thread in the ruleset's domain.
func restrictSelf(fd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("restrict this thread: %w", e)
	}
	return nil
}
