package main

import (
	"fmt"
	"time"

	"buddi/surfaces/webauth"
)

type dashboardCmd struct {
	JSON bool `help:"Print JSON: {\"url\",\"expires_at\"}."`
}

// Run prints the dashboard's address. Off loopback (BUDDI_WEB_HOST) it prints a sign-in link
// with a single-use ticket valid five minutes, which the browser exchanges for a session.
func (c dashboardCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	url := "http://" + cfg.WebAddr() + "/"
	var expires *time.Time
	if cfg.Remote() {
		src, err := openActions(env)
		if err != nil {
			return err
		}
		defer closeSource(src)
		ticket, err := webauth.Issue(env.ctx, src.Pool, webauth.PurposeSession, "")
		if err != nil {
			return err
		}
		url = "http://" + cfg.WebAddr() + "/auth?ticket=" + ticket
		at := time.Now().Add(webauth.TicketTTL).UTC()
		expires = &at
	}
	if c.JSON {
		return writeJSON(env, map[string]any{"url": url, "expires_at": expires})
	}
	fmt.Fprintln(env.stdout, url)
	if expires != nil {
		fmt.Fprintln(env.stderr, "Open it within five minutes; it works once and signs this browser in.")
	} else {
		fmt.Fprintln(env.stderr, "On loopback the dashboard needs no sign-in: the address is the credential.")
	}
	return nil
}
