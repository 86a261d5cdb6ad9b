package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/doctor"
)

// TestServiceInstallStatusUninstall runs the three commands through the binary with the unit
// directory redirected, so no service manager is told: each says what to run.
func TestServiceInstallStatusUninstall(t *testing.T) {
	units := filepath.Join(t.TempDir(), "units")
	const key = "t1Qm3b6Yc0o0Jg4n1n7wX1y4B0t5vJm1pQ2rS3tU4vA="
	home, _, vars := env(t, "BUDDI_SERVICE_DIR="+units, "BUDDI_VAULT_KEY="+key)
	unitPath := filepath.Join(units, "buddi.service")
	envFile := filepath.Join(home, "service.env")

	code, _, stderr := runBuddi(t, vars, time.Minute, "service", "status")
	if code != doctor.ExitDoFirst || !strings.Contains(stderr, "buddi is not installed as a service: run `buddi service install`") {
		t.Errorf("status before install: exit %d\n%s", code, stderr)
	}

	code, stdout, stderr := runBuddi(t, vars, time.Minute, "service", "install")
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"wrote " + unitPath,
		"so it is written to " + envFile + " (mode 0600, nothing else in it)",
		"loginctl enable-linger",
		"  systemctl --user daemon-reload\n  systemctl --user enable --now buddi.service\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("install said:\n%s\nwant %q", stdout, want)
		}
	}
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.EvalSymlinks(binary)
	for _, want := range []string{"ExecStart=\"" + self + "\" serve\n", "Environment=\"BUDDI_HOME=" + home + "\"\n", "EnvironmentFile=" + envFile + "\n", "Restart=on-failure\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(string(unit), key) {
		t.Errorf("the unit holds the vault key:\n%s", unit)
	}
	fi, err := os.Stat(envFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("env file: %v %v, want mode 0600", fi, err)
	}
	if b, _ := os.ReadFile(envFile); string(b) != "BUDDI_VAULT_KEY='"+key+"'\n" {
		t.Errorf("env file holds %q, want the key variable alone", b)
	}
	if analyze, err := exec.LookPath("systemd-analyze"); err == nil {
		if out, err := exec.Command(analyze, "verify", unitPath).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	} else {
		t.Log("systemd-analyze is not installed: the unit is not verified by systemd here")
	}

	code, stdout, stderr = runBuddi(t, vars, time.Minute, "service", "status", "--json")
	var st struct {
		Status struct {
			Unit      string   `json:"unit"`
			Installed bool     `json:"installed"`
			Known     bool     `json:"known"`
			ToRun     []string `json:"to_run"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil || code != 0 {
		t.Fatalf("status --json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	if st.Status.Unit != unitPath || !st.Status.Installed || st.Status.Known || strings.Join(st.Status.ToRun, "") != "systemctl --user status buddi.service" {
		t.Errorf("status = %+v", st.Status)
	}

	// With a key file the service finds the key itself: no env file, and the old one goes.
	cfgDir := filepath.Join(filepath.Dir(home), "config", "buddi")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "vault.key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runBuddi(t, vars, time.Minute, "service", "install")
	if code != 0 || !strings.Contains(stdout, "The service finds the vault key in "+filepath.Join(cfgDir, "vault.key")) || !strings.Contains(stdout, "Removed "+envFile) {
		t.Errorf("install with a key file: exit %d\n%s%s", code, stdout, stderr)
	}
	if unit, _ := os.ReadFile(unitPath); strings.Contains(string(unit), "EnvironmentFile") {
		t.Errorf("the unit reads an env file though the key file is there:\n%s", unit)
	}
	if _, err := os.Stat(envFile); err == nil {
		t.Error("the env file is still there")
	}

	code, stdout, stderr = runBuddi(t, vars, time.Minute, "service", "uninstall")
	if code != 0 || !strings.Contains(stdout, "removed "+unitPath) || !strings.Contains(stdout, "systemctl --user stop buddi.service") {
		t.Errorf("uninstall: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(unitPath); err == nil {
		t.Error("the unit is still there")
	}
	code, stdout, _ = runBuddi(t, vars, time.Minute, "service", "uninstall")
	if code != 0 || !strings.Contains(stdout, "nothing to remove") {
		t.Errorf("second uninstall: exit %d\n%s", code, stdout)
	}
}
