package main

import (
	"errors"
	"fmt"
	"time"

	"buddi/core/seal"
	"buddi/doctor"
	"buddi/surfaces/webauth"
)

type dashboardCmd struct {
	JSON    bool `help:"Print JSON: {\"url\",\"expires_at\"}."`
	Tailnet bool `help:"Print a single-use sign-in link on the tailnet: the login that opens it first becomes the owner's."`
}

// Run prints a sign-in link to the dashboard: its address with a single-use ticket valid five
// minutes, which the browser exchanges for a long-lived session. Every request to the
// dashboard needs that session, on loopback as off it.
func (c dashboardCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	url := "http://" + cfg.WebAddr() + "/"
	var expires *time.Time
	if c.Tailnet {
		rep, err := doctor.Serving(env.ctx, cfg)
		if err != nil {
			return &exitError{code: 3, err: fmt.Errorf("%v: start buddi with `buddi serve --tailnet` first", err)}
		}
		switch {
		case rep.Tailnet == nil:
			return &exitError{code: 3, err: errors.New("buddi runs without the tailnet: start it with `buddi serve --tailnet`, or `buddi tailnet on` and restart")}
		case rep.Tailnet.Problem != "":
			return &exitError{code: 1, err: errors.New(rep.Tailnet.Problem)}
		case rep.Tailnet.URL == "":
			return &exitError{code: 1, err: fmt.Errorf("the tailnet node is %s, not on the tailnet yet: try again in a moment", rep.Tailnet.State)}
		}
		if rep.Tailnet.Owner != "" { // the owner's login is the credential: no ticket is needed
			if c.JSON {
				return writeJSON(env, map[string]any{"url": rep.Tailnet.URL, "expires_at": nil, "owner": rep.Tailnet.Owner})
			}
			fmt.Fprintln(env.stdout, rep.Tailnet.URL)
			fmt.Fprintf(env.stderr, "On the tailnet the dashboard opens for %s with no sign-in, and for no one else.\n", rep.Tailnet.Owner)
			return nil
		}
		url, expires, err = signInLink(env, rep.Tailnet.URL, webauth.SubjectTailnet)
		if err != nil {
			return err
		}
		if c.JSON {
			return writeJSON(env, map[string]any{"url": url, "expires_at": expires, "owner": rep.Tailnet.Owner})
		}
		fmt.Fprintln(env.stdout, url)
		fmt.Fprintln(env.stderr, "Open it within five minutes on a device on your tailnet: the login that opens it becomes the owner's, and only that login gets in.")
		return nil
	}
	if url, expires, err = signInLink(env, url, ""); err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, map[string]any{"url": url, "expires_at": expires})
	}
	fmt.Fprintln(env.stdout, url)
	fmt.Fprintln(env.stderr, "Open it within five minutes; it works once and signs this browser in.")
	return nil
}

// signInLink issues a single-use sign-in ticket and returns the link that redeems it on base
// (the dashboard's address, ending in a slash) and when it expires.
func signInLink(env *runEnv, base, subject string) (string, *time.Time, error) {
	src, err := openActions(env)
	if err != nil {
		return "", nil, err
	}
	defer closeSource(src)
	cfg, err := loadConfig()
	if err != nil {
		return "", nil, err
	}
	key, err := seal.Load(cfg.Home)
	if err != nil {
		return "", nil, err
	}
	ticket, err := webauth.Issue(env.ctx, src.Pool, key, webauth.PurposeSession, subject)
	if err != nil {
		return "", nil, err
	}
	at := time.Now().Add(webauth.TicketTTL).UTC()
	return base + "auth?ticket=" + ticket, &at, nil
}
