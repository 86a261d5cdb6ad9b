package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"buddi/core/vault"
	"buddi/dbsource"
	"buddi/doctor"
	"buddi/internal/bytesize"
	"buddi/internal/timezone"
	"buddi/plugins/web"
)

type webCmd struct {
	Read    webReadCmd    `cmd:"" help:"Read a web page the way an agent's web.read does: through the address guard, as text."`
	Status  webStatusCmd  `cmd:"" help:"Say what the web tools can do here: the search backend and web.read's limits."`
	Fetches webFetchesCmd `cmd:"" help:"List what agents fetched from the web (web.fetches), newest first."`
}

type webStatusCmd struct {
	JSON bool `help:"Print JSON: {search {configured, provider, host, problem}, read, timeout_s, text_types, max_redirects, guard, source, untrusted}."`
}

// Run says what web.status says to an agent, with the vault's keys when the vault opens.
func (c webStatusCmd) Run(env *runEnv) error {
	deps := web.Deps{Search: web.SearchFromEnv(os.Getenv)}
	if cfg, err := loadConfig(); err == nil {
		if _, err := os.Stat(vaultPath(cfg.Home)); err == nil {
			if v, _, err := vault.OpenOwner(vaultPath(cfg.Home), os.Getenv); err == nil {
				deps.Search.Secret = v.Get
			}
		}
	}
	st := web.New(deps).Status()
	if c.JSON {
		return writeJSON(env, st)
	}
	search := "none"
	switch {
	case st.Search.Configured:
		search = fmt.Sprintf("%s at %s", st.Search.Provider, st.Search.Host)
	case st.Search.Problem != "":
		search = "not working: " + st.Search.Problem
	}
	_, err := fmt.Fprintf(env.stdout, "search:     %s\nweb.read:   at most %s per page, %d bytes of text, %d s, %d redirects; %s\naddresses:  %s\n",
		search, bytesize.String(st.Read.MaxBytes), st.Read.MaxText, st.TimeoutS, st.MaxRedirects, strings.Join(st.TextTypes, ", "), st.Guard)
	return err
}

type webFetchesCmd struct {
	Agent string `help:"Only this agent's fetches (its id or @handle; owner for your own reads)."`
	Limit int    `default:"20" help:"How many rows, at most 200."`
	JSON  bool   `help:"Print JSON: [{agent, at, tool, purpose, host, outcome, reason, status, bytes, conversation_id, run_id}]."`
}

// Run lists the audit log from the database, times in the owner's zone.
func (c webFetchesCmd) Run(env *runEnv) error {
	if c.Limit < 1 || c.Limit > 200 {
		return &exitError{code: 2, err: fmt.Errorf("--limit %d is out of range: give a number from 1 to 200", c.Limit)}
	}
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	// A handle or id of a loaded agent names its id; "owner" is your own reads; anything else
	// is taken as an id (an agent since removed keeps its rows).
	agent := strings.TrimSpace(c.Agent)
	if agent != "" && agent != web.Owner {
		if a, err := resolveAgent(agent); err == nil {
			agent = a.ID
		} else {
			agent = strings.TrimPrefix(agent, "@")
		}
	}
	rows, err := web.Store{Pool: src.Pool}.Recent(env.ctx, agent, c.Limit)
	if err != nil {
		return fmt.Errorf("read web.fetches (is the web plugin's schema migrated? buddi db migrate does it): %w", err)
	}
	out := rows // web.Record's JSON is the row's: no body
	if out == nil {
		out = []web.Record{}
	}
	if c.JSON {
		return writeJSON(env, out)
	}
	if len(out) == 0 {
		_, err := fmt.Fprintln(env.stdout, "No fetches yet.")
		return err
	}
	zone := timezone.Local().Location()
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tAGENT\tTOOL\tHOST\tOUTCOME\tPURPOSE")
	for _, r := range out {
		outcome := r.Outcome
		if r.Reason != "" {
			outcome += ": " + r.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.At.In(zone).Format("2006-01-02 15:04"), r.Agent, r.Tool, r.Host, outcome, r.Purpose)
	}
	return tw.Flush()
}

type webReadCmd struct {
	URL     string `arg:"" help:"The page's http or https URL."`
	Purpose string `default:"read from the terminal" help:"Why, as web.fetches records it."`
	JSON    bool   `help:"Print JSON: the page {url, title, text, truncated, source, untrusted}."`
}

// Run reads the page on the same path as web.read (the guard, the limits, the extractor)
// and records the fetch in web.fetches as the owner's when the database can be reached.
func (c webReadCmd) Run(env *runEnv) error {
	deps := web.Deps{Search: web.SearchFromEnv(os.Getenv)}
	src, err := openActions(env)
	switch {
	case err == nil:
		defer closeSource(src)
		deps.Pool = src.Pool
	case errors.Is(err, dbsource.ErrNotInitialised):
		// No buddi here yet: nothing to record in.
	default:
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		fmt.Fprintf(env.stderr, "buddi: the read is not recorded in web.fetches: %v\n", err)
	}
	page, readErr, recordErr := web.New(deps).Read(env.ctx, web.Request{Agent: web.Owner, Purpose: c.Purpose, URL: c.URL})
	if recordErr != nil {
		fmt.Fprintf(env.stderr, "buddi: the read is not recorded in web.fetches: %v\n", recordErr)
	}
	if readErr != nil {
		return &exitError{code: doctor.ExitProblem, err: readErr}
	}
	if c.JSON {
		return writeJSON(env, page)
	}
	var b strings.Builder
	if page.Title != "" {
		b.WriteString(page.Title + "\n")
	}
	b.WriteString(page.URL + "\n\n")
	if page.Text != "" {
		b.WriteString(page.Text + "\n")
	}
	if page.Truncated {
		b.WriteString("\n(The text is cut at its limit.)\n")
	}
	_, err = fmt.Fprint(env.stdout, b.String())
	return err
}
