//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// landlockOnlyEnv makes this test binary a child that applies only the box's Landlock
// ruleset (no mounts, no dropped capabilities) and reports what it can still do: the rules
// alone must keep the data directory unreadable, belt and braces under the mount that hides
// it. The value is {"launch": …, "ops": [[op, path], …]}.
const landlockOnlyEnv = "BUDDI_SANDBOX_TEST_LANDLOCK_ONLY"

func TestMain(m *testing.M) {
	if v := os.Getenv(landlockOnlyEnv); v != "" {
		os.Exit(landlockOnly(v))
	}
	os.Exit(m.Run())
}

// landlockOnly is the child's work: restrict this thread as the launcher would, then try
// each operation and print "op path: ok" or "op path: error".
func landlockOnly(v string) int {
	runtime.LockOSThread()
	var in struct {
		Launch launch      `json:"launch"`
		Ops    [][2]string `json:"ops"`
	}
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		fmt.Println("decode:", err)
		return 1
	}
	b, err := prepare(in.Launch)
	if err != nil {
		fmt.Println("prepare:", err)
		return 1
	}
	fd, err := b.ruleset()
	if err != nil {
		fmt.Println("ruleset:", err)
		return 1
	}
	if err := restrictSelf(fd); err != nil {
		fmt.Println("restrict:", err)
		return 1
	}
	for _, op := range in.Ops {
		var err error
		switch op[0] {
		case "read":
			_, err = os.ReadFile(op[1])
		case "list":
			_, err = os.ReadDir(op[1])
		case "write":
			err = os.WriteFile(op[1], []byte("x"), 0o600)
		case "exec":
			err = exec.Command(op[1]).Run()
		}
		if err != nil {
			fmt.Printf("%s %s: %v\n", op[0], op[1], err)
		} else {
			fmt.Printf("%s %s: ok\n", op[0], op[1])
		}
	}
	return 0
}

// TestLandlockAloneKeepsHome: with no mount hiding anything, the ruleset by itself refuses
// reading the data directory (directly and through a link in the workspace) and writing
// outside the workspace, and allows reading the system, running programs, writing the
// workspace and /dev/null. Root's capabilities do not get past it.
func TestLandlockAloneKeepsHome(t *testing.T) {
	t.Parallel()
	needBox(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp(wd, ".landlocktest-") // outside /tmp, as ~/.buddi is
	if err != nil {
		t.Skipf("no directory outside /tmp to test in: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root); _ = os.Remove("/etc/.landlocktest-planted") })
	if underPrivate(root) != "" {
		t.Skipf("%s is under a directory every box replaces (there the ruleset grants all, and the mount does the hiding)", root)
	}
	home, ws, outside := root+"/home", root+"/ws", root+"/outside"
	for _, d := range []string{home, ws, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(home+"/vault.json", []byte("sealed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home+"/vault.json", ws+"/link"); err != nil {
		t.Fatal(err)
	}
	ops := [][2]string{
		{"read", home + "/vault.json"}, {"read", ws + "/link"}, {"write", home + "/planted"},
		{"write", outside + "/planted"}, {"write", "/etc/.landlocktest-planted"},
		{"read", "/etc/passwd"}, {"exec", "/bin/true"}, {"write", ws + "/made"}, {"write", "/dev/null"}, {"list", home},
	}
	want := map[string]bool{"read /etc/passwd": true, "exec /bin/true": true, "write " + ws + "/made": true,
		"write /dev/null": true, "list " + home: true}
	in, _ := json.Marshal(map[string]any{"launch": launch{Policy: Policy{Home: home, Workspace: ws}, Dir: ws, Probe: true}, "ops": ops})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{landlockOnlyEnv + "=" + string(in)}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	for _, op := range ops {
		key := op[0] + " " + op[1]
		if ok := got[key] == "ok"; ok != want[key] {
			t.Errorf("%s: %q, want ok %v", key, got[key], want[key])
		}
	}
}
