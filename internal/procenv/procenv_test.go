package procenv_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"buddi/internal/procenv"
)

const secret = "k3y-that-opens-the-vault-0123456789"

func TestMain(m *testing.M) {
	if os.Getenv("PROCENV_TEST_CHILD") == "1" {
		// The child: forget the key, say so, then wait for the parent to look.
		if set, err := procenv.Forget("BUDDI_VAULT_KEY"); !set || err != nil {
			os.Stdout.WriteString("forget failed\n")
			os.Exit(1)
		}
		if os.Getenv("BUDDI_VAULT_KEY") != "" {
			os.Stdout.WriteString("still in the environment\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("forgotten\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// After Forget, neither the process's environment nor the kernel's /proc/<pid>/environ
// holds the value; the other variables are intact.
func TestForgetBlanksProcEnviron(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = []string{"PROCENV_TEST_CHILD=1", "BUDDI_VAULT_KEY=" + secret, "KEEP=me"}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "forgotten\n" {
		t.Fatalf("the child said %q (%v)", line, err)
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), secret) {
		t.Fatalf("/proc/<pid>/environ still holds the key: %q", environ)
	}
	if !strings.Contains(string(environ), "KEEP=me") {
		t.Errorf("the other variables were damaged: %q", environ)
	}
}

func TestForgetUnsetIsNothing(t *testing.T) {
	if set, err := procenv.Forget("PROCENV_NEVER_SET_" + strconv.Itoa(os.Getpid())); set || err != nil {
		t.Fatalf("Forget of an unset variable: %v, %v", set, err)
	}
}
