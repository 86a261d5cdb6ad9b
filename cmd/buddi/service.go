package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"buddi/core/vault"
	"buddi/datadir"
	"buddi/doctor"
	"buddi/service"
)

type serviceCmd struct {
	Install   serviceInstallCmd   `cmd:"" help:"Run buddi serve as your service (systemd user unit, launchd agent), started now and at login."`
	Uninstall serviceUninstallCmd `cmd:"" help:"Stop the service and remove its unit."`
	Status    serviceStatusCmd    `cmd:"" help:"Say whether the service is installed and running."`
}

// serviceDirEnv puts the unit in another directory (for tests and for trying it out); the
// service manager, which does not look there, is then not told.
const serviceDirEnv = "BUDDI_SERVICE_DIR"

func serviceManager() (service.Manager, error) {
	m := service.Manager{Kind: service.DefaultKind()}
	if dir := os.Getenv(serviceDirEnv); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return m, &exitError{code: doctor.ExitUsage, err: fmt.Errorf("%s=%q is not a directory path: %w", serviceDirEnv, dir, err)}
		}
		m.Dir = abs
		return m, nil
	}
	dir, err := service.DefaultDir(m.Kind)
	if err != nil {
		return m, err
	}
	m.Dir = dir
	tool := "systemctl"
	if m.Kind == service.Launchd {
		tool = "launchctl"
	}
	if p, err := exec.LookPath(tool); err == nil {
		m.Tool = p
	}
	return m, nil
}

// lingerNote says whether a systemd user service runs without a login, and how to make it.
func lingerNote(ctx context.Context) (linger string, note string) {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if p, err := exec.LookPath("loginctl"); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, p, "show-user", name, "--property=Linger", "--value").Output(); err == nil {
			linger = strings.TrimSpace(string(out))
		}
	}
	if linger == "yes" {
		return linger, "Lingering is on for " + name + ": the service starts at boot and keeps running without a login."
	}
	return linger, fmt.Sprintf("A user service runs while %s is logged in; to start it at boot and keep it running after you log out, run `loginctl enable-linger %s`.", name, name)
}

type serviceInstallCmd struct {
	JSON bool `help:"Print the result as JSON."`
}

func (c serviceInstallCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	m, err := serviceManager()
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this buddi's path for the unit: %w", err)
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	if err := datadir.PrepareHome(cfg.Home); err != nil {
		return err
	}
	spec := service.Spec{Binary: bin, Home: cfg.Home, Env: service.CarriedEnv(os.Getenv)}

	// The key the service will find without this shell's BUDDI_VAULT_KEY.
	ko, err := vault.OwnerKeyOptions(os.Getenv)
	if err != nil {
		return &exitError{code: doctor.ExitUsage, err: err}
	}
	shellKey := ko.Env
	ko.Env = ""
	key, err := vault.ResolveKey(ko)
	if err != nil {
		return err
	}
	envFile := filepath.Join(cfg.Home, service.EnvFileName)
	var notes []string
	switch {
	case key.Source != vault.KeyNowhere:
		notes = append(notes, "The service finds the vault key in "+key.Where+", as buddi serve does: the unit holds no secret.")
		if key.Source == vault.KeyFromKeychain {
			notes = append(notes, "The keychain must be unlocked when the service starts (a login session); without one, keep the key in a key file.")
		}
		if err := os.Remove(envFile); err == nil {
			notes = append(notes, "Removed "+envFile+", which is no longer needed.")
		}
	case strings.TrimSpace(shellKey) != "":
		if err := service.WriteEnvFile(envFile, shellKey); err != nil {
			return err
		}
		spec.EnvFile = envFile
		notes = append(notes, "The vault key is only in this shell's BUDDI_VAULT_KEY, so it is written to "+envFile+" (mode 0600, nothing else in it), which the unit reads.")
	default:
		notes = append(notes, "No vault key was found: run `buddi init` to make one, or the service runs with the vault locked.")
	}
	if os.Getenv("DATABASE_URL") != "" {
		notes = append(notes, "DATABASE_URL is set here but not written into the unit (it may hold a password): without it the service runs buddi's own database.")
	}
	res, ierr := m.Install(env.ctx, spec)
	linger := ""
	if m.Kind == service.Systemd {
		var note string
		linger, note = lingerNote(env.ctx)
		notes = append(notes, note)
	}
	if m.Tool == "" && ierr == nil {
		if os.Getenv(serviceDirEnv) != "" {
			notes = append(notes, "The unit is in "+m.Dir+" ("+serviceDirEnv+"), where the service manager does not look: it was not told.")
		} else {
			notes = append(notes, "No service manager was found here: run the commands below once one runs.")
		}
	}
	if c.JSON {
		if err := writeJSON(env, map[string]any{"result": res, "notes": notes, "linger": linger}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(env.stdout, "wrote", res.Unit)
		for _, r := range res.Ran {
			fmt.Fprintln(env.stdout, "ran:", r)
		}
		for _, n := range notes {
			fmt.Fprintln(env.stdout, n)
		}
		printToRun(env.stdout, "To start it, run:", res.ToRun)
	}
	if ierr != nil {
		return fmt.Errorf("the unit is written, but the service manager was not told: %w", ierr)
	}
	return nil
}

type serviceUninstallCmd struct {
	JSON bool `help:"Print the result as JSON."`
}

func (c serviceUninstallCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	m, err := serviceManager()
	if err != nil {
		return err
	}
	res, err := m.Uninstall(env.ctx, filepath.Join(cfg.Home, service.EnvFileName))
	if errors.Is(err, service.ErrNotInstalled) {
		if c.JSON {
			return writeJSON(env, map[string]any{"result": res, "installed": false})
		}
		fmt.Fprintf(env.stdout, "buddi is not installed as a service (there is no %s): nothing to remove\n", res.Unit)
		return nil
	}
	if c.JSON {
		if jerr := writeJSON(env, map[string]any{"result": res, "installed": err != nil}); jerr != nil {
			return jerr
		}
	} else {
		for _, r := range res.Ran {
			fmt.Fprintln(env.stdout, "ran:", r)
		}
		if err == nil {
			fmt.Fprintln(env.stdout, "removed", res.Unit)
		}
		if res.EnvFile != "" {
			fmt.Fprintln(env.stdout, "removed", res.EnvFile)
		}
		printToRun(env.stdout, "To stop what is still running, run:", res.ToRun)
	}
	if err != nil {
		return fmt.Errorf("the service could not be stopped, so its unit is kept: %w", err)
	}
	return nil
}

type serviceStatusCmd struct {
	JSON bool `help:"Print the status as JSON."`
}

func (c serviceStatusCmd) Run(env *runEnv) error {
	m, err := serviceManager()
	if err != nil {
		return err
	}
	st := m.Status(env.ctx)
	linger, note := "", ""
	if m.Kind == service.Systemd && st.Installed {
		linger, note = lingerNote(env.ctx)
	}
	if c.JSON {
		if err := writeJSON(env, map[string]any{"status": st, "linger": linger}); err != nil {
			return err
		}
	} else {
		switch {
		case !st.Installed:
			fmt.Fprintf(env.stdout, "not installed (no %s)\n", st.Unit)
		case !st.Known:
			fmt.Fprintf(env.stdout, "installed: %s\n", st.Unit)
			if st.Problem != "" {
				fmt.Fprintln(env.stdout, st.Problem)
			}
			for _, r := range st.ToRun {
				fmt.Fprintln(env.stdout, "the service manager was not asked; run: "+r)
			}
		default:
			fmt.Fprintf(env.stdout, "installed: %s\nstate: %s", st.Unit, st.Active)
			if st.Sub != "" {
				fmt.Fprintf(env.stdout, " (%s)", st.Sub)
			}
			fmt.Fprintln(env.stdout)
			if st.Enabled != "" {
				fmt.Fprintln(env.stdout, "enabled:", st.Enabled)
			}
			if st.PID > 0 {
				fmt.Fprintf(env.stdout, "pid: %d, since %s\n", st.PID, st.Since)
			}
			if st.Restarts > 0 {
				fmt.Fprintf(env.stdout, "restarted %d times\n", st.Restarts)
			}
		}
		if note != "" {
			fmt.Fprintln(env.stdout, note)
		}
	}
	switch {
	case !st.Installed:
		return &exitError{code: doctor.ExitDoFirst, err: errors.New("buddi is not installed as a service: run `buddi service install`")}
	case st.Known && !st.Running():
		logs := "`journalctl --user -u " + service.Name + "`"
		if m.Kind == service.Launchd {
			logs = "$BUDDI_HOME/logs/service.log"
		}
		return &exitError{code: doctor.ExitProblem, err: fmt.Errorf("the service is installed but not running (%s): see %s", st.Active, logs)}
	}
	return nil
}

// printToRun prints the commands the owner runs by hand (no service manager answered) under
// heading; nothing when there are none.
func printToRun(w io.Writer, heading string, cmds []string) {
	if len(cmds) == 0 {
		return
	}
	fmt.Fprintln(w, heading)
	for _, c := range cmds {
		fmt.Fprintln(w, "  "+c)
	}
}
