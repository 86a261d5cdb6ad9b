package pgcluster

import (
	"os"
	"path/filepath"
	"testing"
)

func TestACLCodecRoundTrip(t *testing.T) {
	in, err := withSearch(nil, 0o750, 101)
	if err != nil {
		t.Fatal(err)
	}
	out, err := parseACL(encodeACL(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint16]uint16{aclUserObj: 7, aclGroupObj: 5, aclOther: 0, aclUser: 1, aclMask: 5}
	if len(out) != len(want) {
		t.Fatalf("entries = %+v", out)
	}
	for _, e := range out {
		if want[e.tag] != e.perm {
			t.Errorf("tag %#x perm %d, want %d", e.tag, e.perm, want[e.tag])
		}
		if e.tag == aclUser && e.id != 101 {
			t.Errorf("user entry for %d, want 101", e.id)
		}
	}
	if _, err := parseACL([]byte{1, 2, 3}); err == nil {
		t.Error("a short ACL parsed")
	}
}

// Under root, the account gets search access (and nothing else) on exactly the ancestors it
// could not enter; a second call changes nothing.
func TestGrantSearch(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("grantSearch runs only for root")
	}
	acct, err := unprivilegedAccount()
	if err != nil {
		t.Skip(err)
	}
	base := t.TempDir() // mode 0700, owned by root
	dir := filepath.Join(base, "home", "pg")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	granted, err := grantSearch(dir, acct)
	if err != nil {
		t.Fatal(err)
	}
	if len(granted) < 2 {
		t.Fatalf("granted = %v, want at least %s and its parent", granted, filepath.Dir(dir))
	}
	for _, d := range granted {
		if !aclGrants(d, acct.uid) {
			t.Errorf("%s: no search access for %s", d, acct.name)
		}
		fi, _ := os.Stat(d)
		if fi.Mode().Perm()&0o007 != 0 {
			t.Errorf("%s: others got access too (mode %v)", d, fi.Mode().Perm())
		}
	}
	again, err := grantSearch(dir, acct)
	if err != nil || len(again) != 0 {
		t.Errorf("second grant = %v, %v; want nothing to do", again, err)
	}
}

// A mask that withholds search from entries that have it is not widened for one account.
func TestWithSearchDoesNotWidenAMaskForOthers(t *testing.T) {
	acl := []aclEntry{
		{aclUserObj, 7, aclUndefined}, {aclUser, 5, 65534}, {aclGroupObj, 5, aclUndefined},
		{aclMask, 4, aclUndefined}, {aclOther, 0, aclUndefined},
	}
	if _, err := withSearch(acl, 0o740, 101); err == nil {
		t.Error("the mask was widened: nobody and the group would gain search")
	}
	// With no other entry holding x, widening the mask gives it to our account alone.
	acl[1].perm, acl[2].perm = 4, 4
	if _, err := withSearch(acl, 0o740, 101); err != nil {
		t.Errorf("a mask widening only for the account was refused: %v", err)
	}
}
