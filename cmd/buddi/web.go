package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"buddi/dbsource"
	"buddi/doctor"
	"buddi/plugins/web"
)

type webCmd struct {
	Read webReadCmd `cmd:"" help:"Read a web page the way an agent's web.read does: through the address guard, as text."`
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
