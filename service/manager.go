package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Kinds of service manager.
const (
	Systemd = "systemd" // Linux: a systemd user unit
	Launchd = "launchd" // macOS: a launchd agent
)

// Manager installs, removes and inspects buddi's unit with one service manager.
type Manager struct {
	// Kind is Systemd or Launchd. Default: launchd on macOS, systemd elsewhere.
	Kind string
	// Dir is where the unit file goes. Default DefaultDir(Kind).
	Dir string
	// Tool is the path of systemctl or launchctl. Empty means the manager is not to be told:
	// each result then lists the commands for the owner to run.
	Tool string
}

// Result says what Install or Uninstall did and what is left for the owner.
type Result struct {
	// Unit is the unit file's path.
	Unit string `json:"unit"`
	// EnvFile is the environment file written or removed, if any.
	EnvFile string `json:"env_file,omitempty"`
	// Ran are the service manager's commands that were run.
	Ran []string `json:"ran,omitempty"`
	// ToRun are the commands the owner still has to run (no service manager here).
	ToRun []string `json:"to_run,omitempty"`
}

// DefaultKind is the service manager of this operating system.
func DefaultKind() string {
	if runtime.GOOS == "darwin" {
		return Launchd
	}
	return Systemd
}

// DefaultDir is where kind's per-user units live: $XDG_CONFIG_HOME/systemd/user
// (~/.config/systemd/user), or ~/Library/LaunchAgents.
func DefaultDir(kind string) (string, error) {
	if kind == Launchd {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the home directory for ~/Library/LaunchAgents: %w", err)
		}
		return filepath.Join(home, "Library", "LaunchAgents"), nil
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "systemd", "user"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the home directory for ~/.config/systemd/user: %w", err)
	}
	return filepath.Join(home, ".config", "systemd", "user"), nil
}

func (m Manager) kind() string {
	if m.Kind == "" {
		return DefaultKind()
	}
	return m.Kind
}

// Path is the unit file's path.
func (m Manager) Path() string {
	if m.kind() == Launchd {
		return filepath.Join(m.Dir, Label+".plist")
	}
	return filepath.Join(m.Dir, Name)
}

// Unit renders s for this manager.
func (m Manager) Unit(s Spec) (string, error) {
	if m.kind() == Launchd {
		return LaunchdPlist(s)
	}
	return SystemdUnit(s)
}

func (m Manager) domain() string { return "gui/" + strconv.Itoa(os.Getuid()) }

// Install writes the unit for s (mode 0644: it holds no secret) and, when the manager is
// there, loads and starts it.
func (m Manager) Install(ctx context.Context, s Spec) (Result, error) {
	res := Result{Unit: m.Path(), EnvFile: s.EnvFile}
	unit, err := m.Unit(s)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return res, fmt.Errorf("create %s: %w", m.Dir, err)
	}
	if err := writeAtomic(m.Path(), unit, 0o644); err != nil {
		return res, err
	}
	if m.kind() == Launchd {
		// bootout first, so that an agent loaded before reads the new plist.
		cmds := [][]string{{"launchctl", "bootout", m.domain() + "/" + Label}, {"launchctl", "bootstrap", m.domain(), m.Path()}}
		return m.run(ctx, res, cmds, cmds[1:])
	}
	// restart, not start: a buddi already running as the service takes the new unit.
	return m.run(ctx, res,
		[][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", Name}, {"systemctl", "--user", "restart", Name}},
		[][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", Name}})
}

// Uninstall stops and disables the service when the manager is there, removes the unit and
// the environment file envFile ("" for none).
func (m Manager) Uninstall(ctx context.Context, envFile string) (Result, error) {
	res := Result{Unit: m.Path()}
	if _, err := os.Stat(m.Path()); errors.Is(err, os.ErrNotExist) {
		return res, fmt.Errorf("%w: %s does not exist", ErrNotInstalled, m.Path())
	}
	stop := [][]string{{"systemctl", "--user", "disable", "--now", Name}}
	if m.kind() == Launchd {
		stop = [][]string{{"launchctl", "bootout", m.domain() + "/" + Label}}
	}
	manual := stop
	if m.kind() == Systemd {
		manual = [][]string{{"systemctl", "--user", "stop", Name}}
	}
	res, err := m.run(ctx, res, stop, manual)
	if err != nil {
		return res, err
	}
	if m.kind() == Systemd {
		// What disable does, for when systemctl was not run: the link that enables it.
		wants := filepath.Join(m.Dir, "default.target.wants", Name)
		if fi, err := os.Lstat(wants); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			_ = os.Remove(wants)
		}
	}
	if err := os.Remove(m.Path()); err != nil {
		return res, fmt.Errorf("remove %s: %w", m.Path(), err)
	}
	if envFile != "" {
		if err := os.Remove(envFile); err == nil {
			res.EnvFile = envFile
		} else if !errors.Is(err, os.ErrNotExist) {
			return res, fmt.Errorf("remove %s: %w", envFile, err)
		}
	}
	if m.kind() == Systemd {
		reload := [][]string{{"systemctl", "--user", "daemon-reload"}}
		return m.run(ctx, res, reload, reload)
	}
	return res, nil
}

// ErrNotInstalled means there is no unit to remove or inspect.
var ErrNotInstalled = errors.New("service: not installed")

// run runs cmds with the manager's tool. When there is no tool, or a command fails, the
// owner is given manual, the commands to run by hand. A bootout may fail: the agent was not
// loaded.
func (m Manager) run(ctx context.Context, res Result, cmds, manual [][]string) (Result, error) {
	if m.Tool == "" {
		for _, c := range manual {
			res.ToRun = append(res.ToRun, strings.Join(c, " "))
		}
		return res, nil
	}
	for _, c := range cmds {
		line := strings.Join(c, " ")
		out, err := m.exec(ctx, c[1:]...)
		if err != nil && c[1] == "bootout" {
			continue
		}
		if err != nil {
			for _, c := range manual {
				res.ToRun = append(res.ToRun, strings.Join(c, " "))
			}
			return res, fmt.Errorf("`%s` failed: %s (%w)", line, oneLine(out), err)
		}
		res.Ran = append(res.Ran, line)
	}
	return res, nil
}

// oneLine keeps the last line of a command's output.
func oneLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// exec runs the manager's tool with args (and --user's, which are in args) within 30 s.
func (m Manager) exec(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.Tool, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func writeAtomic(path, content string, mode os.FileMode) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Status is what the service manager says about buddi's service.
type Status struct {
	// Unit is the unit file's path.
	Unit string `json:"unit"`
	// Installed says whether the unit file exists.
	Installed bool `json:"installed"`
	// Manager is Systemd or Launchd.
	Manager string `json:"manager"`
	// Known says whether the manager was asked and answered; the fields below are empty
	// otherwise.
	Known bool `json:"known"`
	// Active is systemd's ActiveState ("active", "inactive", "failed", …), or launchd's
	// state ("running", "not running").
	Active string `json:"active,omitempty"`
	// Sub is systemd's SubState ("running", "dead", "auto-restart", …).
	Sub string `json:"sub,omitempty"`
	// Enabled is systemd's UnitFileState ("enabled", "disabled", …).
	Enabled string `json:"enabled,omitempty"`
	// PID is the main process, 0 when none.
	PID int `json:"pid,omitempty"`
	// Since is when the main process started, as the manager says it.
	Since string `json:"since,omitempty"`
	// Restarts counts the manager's restarts of it (systemd's NRestarts).
	Restarts int `json:"restarts,omitempty"`
	// ToRun is the command to ask the manager by hand, when it was not asked.
	ToRun []string `json:"to_run,omitempty"`
	// Problem says why the manager's answer is missing, when it was asked and failed.
	Problem string `json:"problem,omitempty"`
}

// Running reports whether the manager says buddi runs.
func (s Status) Running() bool { return s.Active == "active" || s.Active == "running" }

// Status asks the manager about the service (when there is a manager to ask).
func (m Manager) Status(ctx context.Context) Status {
	st := Status{Unit: m.Path(), Manager: m.kind()}
	_, err := os.Stat(m.Path())
	st.Installed = err == nil
	ask := []string{"systemctl", "--user", "show", Name, "-p", "LoadState,ActiveState,SubState,UnitFileState,MainPID,ExecMainStartTimestamp,NRestarts"}
	if m.kind() == Launchd {
		ask = []string{"launchctl", "print", m.domain() + "/" + Label}
	}
	if m.Tool == "" {
		manual := []string{"systemctl", "--user", "status", Name}
		if m.kind() == Launchd {
			manual = ask
		}
		st.ToRun = []string{strings.Join(manual, " ")}
		return st
	}
	out, err := m.exec(ctx, ask[1:]...)
	if m.kind() == Launchd {
		if err != nil {
			// launchctl print fails for an agent that is not loaded.
			st.Known, st.Active = true, "not running"
			return st
		}
		parseLaunchd(&st, out)
		return st
	}
	if err != nil {
		st.Problem = fmt.Sprintf("`%s` failed: %s", strings.Join(ask, " "), oneLine(out))
		st.ToRun = []string{"systemctl --user status " + Name}
		return st
	}
	parseSystemd(&st, out)
	return st
}

func parseSystemd(st *Status, out string) {
	st.Known = true
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch k {
		case "ActiveState":
			st.Active = v
		case "SubState":
			st.Sub = v
		case "UnitFileState":
			st.Enabled = v
		case "MainPID":
			st.PID, _ = strconv.Atoi(v)
		case "ExecMainStartTimestamp":
			st.Since = v
		case "NRestarts":
			st.Restarts, _ = strconv.Atoi(v)
		}
	}
}

func parseLaunchd(st *Status, out string) {
	st.Known, st.Active = true, "not running"
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if !ok {
			continue
		}
		switch k {
		case "state":
			st.Active = v
		case "pid":
			st.PID, _ = strconv.Atoi(v)
		case "runs":
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				st.Restarts = n - 1
			}
		}
	}
}
