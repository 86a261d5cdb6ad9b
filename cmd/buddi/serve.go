package main

import (
	"buddi/app"
)

type serveCmd struct {
	Tailnet           bool   `help:"Put buddi on your tailnet for this run (the saved setting is buddi tailnet on/off)."`
	TailnetHostname   string `name:"tailnet-hostname" help:"The node's name on the tailnet (default buddi; BUDDI_TAILNET_HOSTNAME)."`
	TailnetControlURL string `name:"tailnet-control-url" help:"A self-hosted coordination server (default Tailscale's; TS_CONTROL_URL)."`
}

func (c serveCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	cfg.Tailnet = c.Tailnet
	if c.TailnetHostname != "" {
		cfg.TailnetHostname = c.TailnetHostname
	}
	if c.TailnetControlURL != "" {
		cfg.TailnetControlURL = c.TailnetControlURL
	}
	if err := cfg.Fill(); err != nil {
		return &exitError{code: 2, err: err}
	}
	return app.Serve(env.ctx, cfg, env.log, app.Options{})
}
