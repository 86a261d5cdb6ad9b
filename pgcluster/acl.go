package pgcluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

// The POSIX ACL extended attribute (linux/posix_acl_xattr.h): a version, then entries of
// (tag, permission, id), little-endian, sorted by tag and id.
const (
	aclXattr     = "system.posix_acl_access"
	aclVersion   = 2
	aclUserObj   = 0x01
	aclUser      = 0x02
	aclGroupObj  = 0x04
	aclGroup     = 0x08
	aclMask      = 0x10
	aclOther     = 0x20
	aclUndefined = 0xFFFFFFFF
	permExecute  = 1
)

type aclEntry struct {
	tag  uint16
	perm uint16
	id   uint32
}

func parseACL(b []byte) ([]aclEntry, error) {
	if len(b) < 4 || (len(b)-4)%8 != 0 || binary.LittleEndian.Uint32(b) != aclVersion {
		return nil, errors.New("unreadable ACL")
	}
	var out []aclEntry
	for i := 4; i < len(b); i += 8 {
		out = append(out, aclEntry{
			tag:  binary.LittleEndian.Uint16(b[i:]),
			perm: binary.LittleEndian.Uint16(b[i+2:]),
			id:   binary.LittleEndian.Uint32(b[i+4:]),
		})
	}
	return out, nil
}

func encodeACL(entries []aclEntry) []byte {
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].tag != entries[j].tag {
			return entries[i].tag < entries[j].tag
		}
		return entries[i].id < entries[j].id
	})
	b := make([]byte, 4, 4+8*len(entries))
	binary.LittleEndian.PutUint32(b, aclVersion)
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// errWidensMask means granting search to one account would widen an existing ACL mask, and
// with it what other named users and groups may do.
var errWidensMask = errors.New("its ACL mask would have to grant search to others too")

// withSearch returns acl (or, when empty, the one mode implies) with search permission added
// for uid, and the mask widened to keep it effective. It refuses (errWidensMask) when a
// mask that withholds search would then give it to another entry as well.
func withSearch(acl []aclEntry, mode os.FileMode, uid uint32) ([]aclEntry, error) {
	if len(acl) == 0 {
		acl = []aclEntry{
			{aclUserObj, uint16(mode>>6) & 7, aclUndefined},
			{aclGroupObj, uint16(mode>>3) & 7, aclUndefined},
			{aclOther, uint16(mode) & 7, aclUndefined},
		}
	}
	found, hasMask := false, false
	var groupClass uint16
	for i := range acl {
		switch acl[i].tag {
		case aclUser:
			if acl[i].id == uid {
				acl[i].perm |= permExecute
				found = true
			}
		case aclMask:
			hasMask = true
		}
	}
	if !found {
		acl = append(acl, aclEntry{aclUser, permExecute, uid})
	}
	for _, e := range acl {
		if e.tag == aclUser || e.tag == aclGroupObj || e.tag == aclGroup {
			groupClass |= e.perm
		}
	}
	if hasMask {
		for i := range acl {
			if acl[i].tag != aclMask || acl[i].perm&permExecute != 0 {
				continue
			}
			for _, e := range acl {
				isUs := e.tag == aclUser && e.id == uid
				if !isUs && (e.tag == aclUser || e.tag == aclGroupObj || e.tag == aclGroup) && e.perm&permExecute != 0 {
					return nil, errWidensMask
				}
			}
			acl[i].perm |= permExecute
		}
	} else {
		acl = append(acl, aclEntry{aclMask, groupClass, aclUndefined})
	}
	return acl, nil
}

// searchableBy reports whether the permission bits let uid (with primary group gid) enter dir.
// Supplementary groups are not considered, so a false answer may be too cautious, never too
// generous.
func searchableBy(fi os.FileInfo, uid, gid uint32) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	mode := fi.Mode().Perm()
	switch {
	case st.Uid == uid:
		return mode&0o100 != 0
	case st.Gid == gid:
		return mode&0o010 != 0
	}
	return mode&0o001 != 0
}

// grantSearch lets the unprivileged account walk down to dir: each ancestor it cannot enter
// gets an ACL entry giving that one account search permission (u:postgres:x), and nothing
// more. It changes nothing where the account can already pass. The path is resolved first,
// so the grants land on the directories the server will really walk, and an ancestor that
// someone other than root could write (and so swap) is refused.
func grantSearch(dir string, acct *account) ([]string, error) {
	var granted []string
	resolved, err := filepath.EvalSymlinks(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", filepath.Dir(dir), err)
	}
	for d := resolved; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return granted, fmt.Errorf("look at %s: %w", d, err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && st.Uid != acct.uid && fi.Mode()&os.ModeSticky == 0 {
			return granted, fmt.Errorf("%s belongs to another user (uid %d), who could move it under buddi: set BUDDI_HOME to a directory owned by root or the %s account, or set DATABASE_URL", d, st.Uid, acct.name)
		}
		if !searchableBy(fi, acct.uid, acct.gid) && !aclGrants(d, acct.uid) {
			if err := addSearch(d, fi.Mode().Perm(), acct.uid); err != nil {
				return granted, fmt.Errorf("the %s account cannot enter %s, and giving it search access failed (%v): set BUDDI_HOME to a directory it can reach, such as one under /var/lib, or set DATABASE_URL", acct.name, d, err)
			}
			granted = append(granted, d)
		}
		if d == "/" || d == filepath.Dir(d) {
			return granted, nil
		}
	}
}

// aclGrants reports whether dir's ACL already lets uid search it.
func aclGrants(dir string, uid uint32) bool {
	acl, err := readACL(dir)
	if err != nil {
		return false
	}
	var user, mask uint16 = 0, 7
	for _, e := range acl {
		switch {
		case e.tag == aclUser && e.id == uid:
			user = e.perm
		case e.tag == aclMask:
			mask = e.perm
		}
	}
	return user&mask&permExecute != 0
}

func readACL(dir string) ([]aclEntry, error) {
	buf := make([]byte, 1024)
	n, err := unix.Lgetxattr(dir, aclXattr, buf)
	if errors.Is(err, unix.ENODATA) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseACL(buf[:n])
}

func addSearch(dir string, mode os.FileMode, uid uint32) error {
	acl, err := readACL(dir)
	if err != nil {
		return err
	}
	next, err := withSearch(acl, mode, uid)
	if err != nil {
		return err
	}
	return unix.Lsetxattr(dir, aclXattr, encodeACL(next), 0)
}
