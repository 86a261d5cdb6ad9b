package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"buddi/app"
	"buddi/core/seal"
	"buddi/doctor"
	"buddi/health"
	"buddi/plugins/developer"
	"buddi/tailnet"
)

type tailnetCmd struct {
	Status   tailnetStatusCmd   `cmd:"" help:"Show the tailnet node: on or off, its state, addresses, the owner's login and open ports."`
	On       tailnetOnCmd       `cmd:"" help:"Put buddi on your tailnet from the next start of buddi serve (off by default)."`
	Off      tailnetOffCmd      `cmd:"" help:"Keep buddi off the tailnet from the next start."`
	Owner    tailnetOwnerCmd    `cmd:"" help:"Set the owner's tailnet login: the only one the dashboard and previews answer on the tailnet."`
	Authkey  tailnetAuthkeyCmd  `cmd:"" help:"Store a tailnet auth key (read from standard input) in the vault, to log the node in without a browser."`
	Previews tailnetPreviewsCmd `cmd:"" help:"Give each developer process a port of its own on the tailnet (on) or not (off, the default)."`
}

type tailnetView struct {
	Enabled  bool            `json:"enabled"`            // the saved setting (buddi tailnet on/off)
	Owner    string          `json:"owner"`              // the owner's tailnet login, "" until set
	Refused  string          `json:"refused,omitempty"`  // a stored login buddi did not seal: nobody's
	Previews bool            `json:"previews"`           // Settings → Developer's switch
	Serving  bool            `json:"serving"`            // a running buddi answered
	Node     *health.Tailnet `json:"node,omitempty"`     // the running node, when buddi serves with it on
	StateDir string          `json:"state_dir"`          // where the node keeps its state
	Problem  string          `json:"problem,omitempty"`  // what is wrong, in one sentence
	Fix      string          `json:"fix,omitempty"`      // what to do about it
	Hostname string          `json:"hostname,omitempty"` // the name the node asks for
}

type tailnetStatusCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c tailnetStatusCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	key, err := seal.Load(cfg.Home)
	if err != nil {
		return err
	}
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	v := tailnetView{StateDir: filepath.Join(cfg.Home, "tsnet"), Hostname: cfg.TailnetHostname}
	if v.Enabled, err = tailnet.Enabled(env.ctx, src.Pool); err != nil {
		return err
	}
	pinned, err := tailnet.ReadOwner(env.ctx, src.Pool, key)
	if err != nil {
		return err
	}
	v.Owner, v.Refused = pinned.Login, pinned.Refused
	if v.Previews, err = developer.NewStore(src.Pool, key, nil).TailnetPreviews(env.ctx); err != nil {
		return err
	}
	if rep, err := doctor.Serving(env.ctx, cfg); err == nil {
		v.Serving, v.Node = true, rep.Tailnet
	}
	switch {
	case v.Node != nil && v.Node.Problem != "":
		v.Problem = v.Node.Problem
	case v.Refused != "":
		v.Problem = fmt.Sprintf("the stored owner login %s carries no seal from this buddi (an earlier buddi wrote it, or it was written into the database), so the tailnet answers no one", v.Refused)
		v.Fix = fmt.Sprintf("if %s is yours, run `buddi tailnet owner %s` again", v.Refused, v.Refused)
	case v.Owner == "" && (v.Enabled || v.Node != nil):
		v.Problem = "no owner login is set, so the tailnet gets nothing but 403s"
		v.Fix = "run `buddi tailnet owner LOGIN`, or open a link from `buddi dashboard --tailnet` on your phone"
	case v.Enabled && v.Serving && v.Node == nil:
		v.Problem = "the tailnet is on, but the running buddi started without it"
		v.Fix = "restart buddi serve"
	}
	if c.JSON {
		return writeJSON(env, v)
	}
	onOff := map[bool]string{true: "on", false: "off"}
	fmt.Fprintf(env.stdout, "tailnet     %s (saved setting; buddi serve --tailnet turns it on for one run)\n", onOff[v.Enabled])
	owner := v.Owner
	switch {
	case v.Refused != "":
		owner = "not set (" + v.Refused + " is stored, but not sealed)"
	case owner == "":
		owner = "not set"
	}
	fmt.Fprintf(env.stdout, "owner       %s\n", owner)
	fmt.Fprintf(env.stdout, "previews    %s (each developer process on a tailnet port of its own)\n", onOff[v.Previews])
	switch {
	case v.Node != nil:
		fmt.Fprintf(env.stdout, "node        %s, %s\n", v.Node.State, v.Node.Hostname)
		if v.Node.URL != "" {
			fmt.Fprintf(env.stdout, "dashboard   %s\n", v.Node.URL)
		}
		if len(v.Node.IPs) > 0 {
			fmt.Fprintf(env.stdout, "addresses   %s\n", strings.Join(v.Node.IPs, ", "))
		}
		for _, p := range v.Node.Ports {
			fmt.Fprintf(env.stdout, "port        %d → process %s\n", p.Port, p.Process)
		}
	case v.Serving:
		fmt.Fprintln(env.stdout, "node        not running in this buddi")
	default:
		fmt.Fprintln(env.stdout, "node        buddi is not running")
	}
	if v.Problem != "" {
		fmt.Fprintf(env.stdout, "\n%s\n", v.Problem)
		if v.Fix != "" {
			fmt.Fprintf(env.stdout, "  → %s\n", v.Fix)
		}
	}
	return nil
}

type tailnetOnCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"ok\",\"enabled\"}."`
}

func (c tailnetOnCmd) Run(env *runEnv) error { return setTailnet(env, true, c.JSON) }

type tailnetOffCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"ok\",\"enabled\"}."`
}

func (c tailnetOffCmd) Run(env *runEnv) error { return setTailnet(env, false, c.JSON) }

func setTailnet(env *runEnv, on, asJSON bool) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := tailnet.SetEnabled(env.ctx, src.Pool, on); err != nil {
		return err
	}
	out := acted(map[string]any{"enabled": on})
	if on {
		if err := report(env, asJSON, out, "The tailnet is on from the next start of buddi serve."); err != nil {
			return err
		}
		key, err := loadSeal()
		if err != nil {
			return err
		}
		owner, err := tailnet.Owner(env.ctx, src.Pool, key)
		if err == nil && owner == "" {
			fmt.Fprintln(env.stderr, "Set the owner's login with `buddi tailnet owner LOGIN`: until then the tailnet gets 403s.")
		}
		return nil
	}
	return report(env, asJSON, out, "The tailnet is off from the next start of buddi serve.")
}

type tailnetOwnerCmd struct {
	Login string `arg:"" help:"The login you sign in to Tailscale with, like you@example.com."`
	JSON  bool   `name:"json" help:"Print JSON: {\"ok\",\"owner\"}."`
}

func (c tailnetOwnerCmd) Run(env *runEnv) error {
	if err := tailnet.ValidLogin(c.Login); err != nil {
		return &exitError{code: 2, err: err}
	}
	key, err := loadSeal()
	if err != nil {
		return err
	}
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := tailnet.SetOwner(env.ctx, src.Pool, key, c.Login); err != nil {
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"owner": c.Login}), "On the tailnet, buddi answers %s and no one else.", c.Login)
}

type tailnetAuthkeyCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"ok\",\"name\",\"logged_in_before\"} (never the key)."`
}

func (c tailnetAuthkeyCmd) Run(env *runEnv) error {
	key, err := readSecret(os.Stdin)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("%v (the key is read from standard input, never from an argument)", err)}
	}
	if !strings.HasPrefix(key, "tskey-") {
		return &exitError{code: 2, err: errors.New("that is not a tailnet auth key: it starts with tskey-; make one in the admin console's Keys page")}
	}
	v, err := openVault()
	if err != nil {
		return err
	}
	if err := v.Set(app.TailnetAuthKeyName, key); err != nil {
		return vaultExit(err)
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	_, err = os.Stat(filepath.Join(cfg.Home, "tsnet", "tailscaled.state"))
	before := err == nil
	if err := report(env, c.JSON, acted(map[string]any{"name": app.TailnetAuthKeyName, "logged_in_before": before}),
		"The auth key is stored; buddi's node uses it at the next start."); err != nil {
		return err
	}
	if before {
		fmt.Fprintf(env.stderr, "The node has logged in before and keeps that login: to log in with the new key, stop buddi and remove %s.\n",
			filepath.Join(cfg.Home, "tsnet"))
	}
	return nil
}

type tailnetPreviewsCmd struct {
	State string `arg:"" enum:"on,off" help:"on or off."`
	JSON  bool   `name:"json" help:"Print JSON: {\"ok\",\"previews\"}."`
}

func (c tailnetPreviewsCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	key, err := loadSeal()
	if err != nil {
		return err
	}
	if err := developer.NewStore(src.Pool, key, nil).SetTailnetPreviews(env.ctx, c.State == "on"); err != nil {
		return err
	}
	out := acted(map[string]any{"previews": c.State == "on"})
	if c.State == "on" {
		return report(env, c.JSON, out, "Each process a developer agent starts on a port also gets that port on the tailnet, for your login only.")
	}
	return report(env, c.JSON, out, "Developer processes get no tailnet ports; open ones close within a second.")
}
