package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"buddi/runtime/transport"
	"buddi/version"
)

// The bounds of web.search.
const (
	maxResults     = 10      // results returned
	maxQuery       = 400     // bytes of a query
	maxSnippet     = 500     // bytes of one result's snippet
	maxSearchBytes = 2 << 20 // bytes of the backend's answer
)

// The search providers this build speaks to.
const (
	// ProviderSearXNG is a self-hosted SearXNG, asked through its JSON API
	// (/search?q=…&format=json, with json among the instance's search formats).
	ProviderSearXNG = "searxng"
)

// SearchConfig is the owner's search backend: configuration, never a model's to change.
type SearchConfig struct {
	// Provider is BUDDI_SEARCH_PROVIDER: "searxng", or "" for none.
	Provider string
	// URL is BUDDI_SEARCH_URL, the backend's base URL (a SearXNG's, e.g.
	// http://127.0.0.1:8888).
	URL string
}

// SearchFromEnv reads the search backend from BUDDI_SEARCH_PROVIDER and BUDDI_SEARCH_URL
// through getenv (os.Getenv).
func SearchFromEnv(getenv func(string) string) SearchConfig {
	return SearchConfig{
		Provider: strings.ToLower(strings.TrimSpace(getenv("BUDDI_SEARCH_PROVIDER"))),
		URL:      strings.TrimSpace(getenv("BUDDI_SEARCH_URL")),
	}
}

// SearchStatus says whether web.search works here, and if not why.
type SearchStatus struct {
	Configured bool   `json:"configured"`         // web.search answers
	Provider   string `json:"provider,omitempty"` // the configured provider
	Host       string `json:"host,omitempty"`     // the backend's host
	Problem    string `json:"problem,omitempty"`  // why it does not answer, and what the owner does
}

// Results are what web.search returns.
type Results struct {
	Query     string   `json:"query"`     // what was searched for
	Results   []Result `json:"results"`   // at most maxResults
	Source    string   `json:"source"`    // always "web"
	Untrusted string   `json:"untrusted"` // always [Rule]
}

// Result is one search result: every item carries its own source, url and the rule.
type Result struct {
	Title     string `json:"title"`     // the result's title
	URL       string `json:"url"`       // the page, http or https
	Snippet   string `json:"snippet"`   // what the backend quoted of it
	Source    string `json:"source"`    // always "web"
	Untrusted string `json:"untrusted"` // always [Rule]
}

// errNoSearch is web.search without a usable backend; its text is for the model.
var errNoSearch = errors.New("web.search has no search backend: the owner has not configured one (web.status says more)")

// searcher asks the owner's search backend.
//
// The backend is not reached through the address guard. Its URL is the owner's own
// configuration, read from the environment buddi starts with, never from a model's
// arguments; a self-hosted SearXNG usually lives on this machine or the owner's network,
// which the guard exists to refuse. The model chooses only the query, which is sent as one
// parameter to that fixed endpoint. The pages the results name are read with web.read,
// through the guard.
type searcher struct {
	cfg     SearchConfig
	base    *url.URL
	problem string
	client  *http.Client
}

func newSearcher(cfg SearchConfig, limits Limits) *searcher {
	s := &searcher{cfg: cfg}
	switch cfg.Provider {
	case "":
		s.problem = "No search backend is configured: the owner sets BUDDI_SEARCH_PROVIDER=searxng and BUDDI_SEARCH_URL to a SearXNG with its JSON format on."
	case ProviderSearXNG:
		u, err := url.Parse(cfg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			s.problem = fmt.Sprintf("BUDDI_SEARCH_URL %q is not an http or https URL: the owner sets it to the SearXNG's address.", cfg.URL)
			break
		}
		s.base = u
	default:
		s.problem = fmt.Sprintf("BUDDI_SEARCH_PROVIDER %q is not a provider this buddi speaks to: the owner sets it to searxng.", cfg.Provider)
	}
	if s.base != nil {
		tr := transport.New(transport.Config{
			MaxResponseBytes:      maxSearchBytes,
			ResponseHeaderTimeout: limits.Timeout,
			ReadIdleTimeout:       limits.Timeout,
		})
		s.client = tr.Client()
	}
	return s
}

func (s *searcher) status() SearchStatus {
	if s.base == nil {
		return SearchStatus{Provider: s.cfg.Provider, Problem: s.problem}
	}
	return SearchStatus{Configured: true, Provider: s.cfg.Provider, Host: s.base.Host}
}

// searxngAnswer is the part of SearXNG's JSON answer read.
type searxngAnswer struct {
	Results []struct {
		URL     string `json:"url"`
		Title   string `json:"title"`
		Content string `json:"content"`
	} `json:"results"`
}

// search asks the backend for query. It returns the Fetch to record unless the error is
// errNoSearch.
func (s *searcher) search(ctx context.Context, query string) (Results, Fetch, error) {
	if s.base == nil {
		return Results{}, Fetch{}, fmt.Errorf("%w. %s", errNoSearch, s.problem)
	}
	f := Fetch{Host: s.base.Host}
	fail := func(msg string) (Results, Fetch, error) {
		f.Outcome, f.Reason = OutcomeError, msg
		return Results{}, f, errors.New(msg)
	}
	u := s.base.JoinPath("search")
	q := url.Values{"q": {query}, "format": {"json"}}
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(fmt.Sprintf("The search backend cannot be asked: %v.", err))
	}
	req.Header.Set("User-Agent", "buddi/"+version.Version+" (web.search)")
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fail(fmt.Sprintf("The search backend at %s did not answer: %v.", s.base.Host, err))
	}
	defer resp.Body.Close()
	f.Status = resp.StatusCode
	body, err := io.ReadAll(resp.Body)
	f.Bytes = int64(len(body))
	if err != nil {
		return fail(fmt.Sprintf("The search backend's answer could not be read: %v.", err))
	}
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Sprintf("The search backend at %s answered %s (a SearXNG must list json among its search formats).", s.base.Host, resp.Status))
	}
	var ans searxngAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return fail(fmt.Sprintf("The search backend at %s did not answer with SearXNG's JSON.", s.base.Host))
	}
	out := Results{Query: query, Results: []Result{}, Source: Source, Untrusted: Rule}
	for _, r := range ans.Results {
		if len(out.Results) == maxResults {
			break
		}
		link, err := url.Parse(r.URL)
		if err != nil || (link.Scheme != "http" && link.Scheme != "https") || link.Host == "" || link.User != nil {
			continue
		}
		out.Results = append(out.Results, Result{
			Title:     bound(collapse(clean(r.Title)), maxTitle),
			URL:       bound(link.String(), 2048),
			Snippet:   bound(collapse(clean(r.Content)), maxSnippet),
			Source:    Source,
			Untrusted: Rule,
		})
	}
	f.Outcome = OutcomeOK
	return out, f, nil
}
