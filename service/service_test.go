package service

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// spec is a unit for a real executable (verify checks that ExecStart can run) under a home
// whose path needs quoting.
func spec(t *testing.T) Spec {
	t.Helper()
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "my home 100%")
	return Spec{Binary: bin, Home: home, Env: map[string]string{"BUDDI_WEB_PORT": "4400", "PATH": "/usr/bin:/bin"}}
}

func TestSystemdUnit(t *testing.T) {
	s := spec(t)
	s.EnvFile = filepath.Join(s.Home, EnvFileName)
	unit, err := SystemdUnit(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ExecStart=\"" + s.Binary + "\" serve\n",
		"Restart=on-failure\n",
		"KillMode=mixed\n",
		"Environment=\"BUDDI_HOME=" + strings.ReplaceAll(s.Home, "%", "%%") + "\"\n",
		"Environment=\"BUDDI_WEB_PORT=4400\"\n",
		"EnvironmentFile=" + strings.ReplaceAll(s.EnvFile, "%", "%%") + "\n",
		"WantedBy=default.target\n",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(unit, KeyVar) {
		t.Errorf("the unit names the vault key:\n%s", unit)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is not verified by systemd here")
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	// System mode: the user manager's verify needs a running user session. Any line it
	// prints is a problem (a directive it ignores is only a warning, exit 0).
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s\n%s", err, out, unit)
	}
}

func TestSystemdUnitRefusesSecrets(t *testing.T) {
	s := spec(t)
	for _, k := range []string{KeyVar, "DATABASE_URL"} {
		s.Env = map[string]string{k: "secret"}
		if _, err := SystemdUnit(s); err == nil {
			t.Errorf("a unit with %s was written", k)
		}
	}
	s.Env = nil
	s.Binary = "buddi"
	if _, err := SystemdUnit(s); err == nil {
		t.Error("a unit with a relative binary was written")
	}
}

func TestLaunchdPlist(t *testing.T) {
	s := spec(t)
	s.Env["LANG"] = "en_US.UTF-8 <&>"
	for _, envFile := range []string{"", filepath.Join(s.Home, EnvFileName)} {
		s.EnvFile = envFile
		plist, err := LaunchdPlist(s)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plist, "<string>"+Label+"</string>") || !strings.Contains(plist, "<string>serve</string>") && envFile == "" {
			t.Errorf("plist lacks its label or program:\n%s", plist)
		}
		if envFile != "" && !strings.Contains(plist, "<string>"+envFile+"</string>") {
			t.Errorf("plist does not read %s:\n%s", envFile, plist)
		}
		if strings.Contains(plist, KeyVar) {
			t.Errorf("the plist names the vault key:\n%s", plist)
		}
		path := filepath.Join(t.TempDir(), Label+".plist")
		if err := os.WriteFile(path, []byte(plist), 0o644); err != nil {
			t.Fatal(err)
		}
		if plutil, err := exec.LookPath("plutil"); err == nil {
			if out, err := exec.Command(plutil, "-lint", path).CombinedOutput(); err != nil {
				t.Errorf("plutil -lint: %v\n%s", err, out)
			}
			continue
		}
		// No plutil (not macOS): the XML must be well formed, and its strings what was given.
		d := xml.NewDecoder(strings.NewReader(plist))
		d.Strict = true
		var texts []string
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("plist is not well-formed XML: %v\n%s", err, plist)
			}
			if cd, ok := tok.(xml.CharData); ok {
				texts = append(texts, string(cd))
			}
		}
		if !strings.Contains(strings.Join(texts, "|"), "|en_US.UTF-8 <&>|") {
			t.Errorf("the variable's value did not survive escaping: %q", texts)
		}
	}
}

func TestWriteEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), EnvFileName)
	// A file left with a wider mode is replaced by a 0600 one.
	if err := os.WriteFile(path, []byte("OTHER=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := "q5Cc2yH3k1r0M3x7Kcz9VnJp8cM0b2ZyTqv1Fh6dA0E="
	if err := WriteEnvFile(path, key+"\n"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if string(b) != KeyVar+"='"+key+"'\n" {
		t.Errorf("env file = %q, want the key variable alone", b)
	}
	// sh reads it as systemd does: the value without its quotes.
	out, err := exec.Command("/bin/sh", "-c", `set -a; . "$0"; printf %s "$BUDDI_VAULT_KEY"`, path).Output()
	if err != nil || string(out) != key {
		t.Errorf("sh read %q (%v), want the key", out, err)
	}
	for _, bad := range []string{"", "it's", "a\nb", `back\slash`} {
		if err := WriteEnvFile(path, bad); err == nil {
			t.Errorf("WriteEnvFile(%q) wrote it", bad)
		}
	}
}

// TestManagerWithoutSystemctl installs, inspects and removes the unit in a directory of the
// test's, with no service manager to tell: each step lists the commands to run.
func TestManagerWithoutSystemctl(t *testing.T) {
	ctx := context.Background()
	m := Manager{Kind: Systemd, Dir: filepath.Join(t.TempDir(), "systemd", "user")}
	if st := m.Status(ctx); st.Installed || st.Known || len(st.ToRun) != 1 {
		t.Errorf("status before install = %+v", st)
	}
	s := spec(t)
	res, err := m.Install(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unit != filepath.Join(m.Dir, Name) || len(res.Ran) != 0 ||
		strings.Join(res.ToRun, "; ") != "systemctl --user daemon-reload; systemctl --user enable --now buddi.service" {
		t.Errorf("install = %+v", res)
	}
	if fi, err := os.Stat(res.Unit); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("unit file: %v %v", fi, err)
	}
	st := m.Status(ctx)
	if !st.Installed || st.Known || strings.Join(st.ToRun, "") != "systemctl --user status buddi.service" {
		t.Errorf("status = %+v", st)
	}

	// What `systemctl --user enable` would have made, and an env file: both go.
	wants := filepath.Join(m.Dir, "default.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(res.Unit, filepath.Join(wants, Name)); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(t.TempDir(), EnvFileName)
	if err := WriteEnvFile(envFile, "key"); err != nil {
		t.Fatal(err)
	}
	res, err = m.Uninstall(ctx, envFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.ToRun, "; ") != "systemctl --user stop buddi.service; systemctl --user daemon-reload" || res.EnvFile != envFile {
		t.Errorf("uninstall = %+v", res)
	}
	for _, gone := range []string{res.Unit, filepath.Join(wants, Name), envFile} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	if _, err := m.Uninstall(ctx, ""); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("second uninstall: %v, want ErrNotInstalled", err)
	}
}

func TestParseSystemd(t *testing.T) {
	var st Status
	parseSystemd(&st, "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\nMainPID=4242\nExecMainStartTimestamp=Tue 2026-05-19 10:00:00 UTC\nNRestarts=2\n")
	if !st.Known || !st.Running() || st.Sub != "running" || st.Enabled != "enabled" || st.PID != 4242 || st.Restarts != 2 || st.Since == "" {
		t.Errorf("parsed %+v", st)
	}
}
