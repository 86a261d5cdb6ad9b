package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"golang.org/x/net/html"

	"buddi/internal/readable"
	"buddi/plugins"
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
	// ProviderTavily is Tavily's search API (POST /search), its key in the vault as
	// [TavilyKey].
	ProviderTavily = "tavily"
	// ProviderBrave is Brave's web search API (GET /res/v1/web/search), its key in the vault
	// as [BraveKey].
	ProviderBrave = "brave"
)

// The vault entries the hosted providers' keys are kept in (`buddi vault set NAME`).
const (
	TavilyKey = "TAVILY_API_KEY"       // Tavily's API key
	BraveKey  = "BRAVE_SEARCH_API_KEY" // Brave Search's subscription token
)

// The hosted providers' own addresses, when BUDDI_SEARCH_URL does not name another.
const (
	tavilyURL = "https://api.tavily.com"
	braveURL  = "https://api.search.brave.com"
)

// SearchConfig is the owner's search backend: configuration, never a model's to change.
type SearchConfig struct {
	// Provider is BUDDI_SEARCH_PROVIDER: "searxng", "tavily", "brave", or "" for none.
	Provider string
	// URL is BUDDI_SEARCH_URL, the backend's base URL: a SearXNG's (e.g.
	// http://127.0.0.1:8888), required for it; for Tavily and Brave it replaces their own
	// address (a proxy the owner runs, say) and is usually left empty.
	URL string
	// Secret reads the hosted providers' key from the owner's vault, at every search (so a
	// key set or replaced after buddi started is used). Nil: no key can be read.
	Secret func(name string) (string, error)
}

// SearchFromEnv reads the search backend from BUDDI_SEARCH_PROVIDER and BUDDI_SEARCH_URL
// through getenv (os.Getenv). The hosted providers' key is the vault's: set Secret.
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
	key     string // the vault entry of the provider's key, "" for SearXNG
	problem string
	client  *http.Client
	bound   atomic.Pointer[func(string) (string, error)] // the vault, bound in buddi serve (BindSecrets)
}

// BindSecrets hands the owner's vault to the web.search of manifests, for the hosted
// providers' keys (a SearchConfig.Secret, when set, is read first); it reports whether it
// found the tool.
func BindSecrets(manifests []plugins.Manifest, get func(name string) (string, error)) bool {
	for _, m := range manifests {
		for _, t := range m.Tools {
			if st, ok := t.(*searchTool); ok {
				st.p.search.bound.Store(&get)
				return true
			}
		}
	}
	return false
}

func newSearcher(cfg SearchConfig, limits Limits) *searcher {
	s := &searcher{cfg: cfg}
	base := cfg.URL
	switch cfg.Provider {
	case "":
		s.problem = "No search backend is configured: the owner sets BUDDI_SEARCH_PROVIDER to tavily or brave (with the key in the vault), or to searxng with BUDDI_SEARCH_URL."
	case ProviderSearXNG:
		if base == "" {
			s.problem = "BUDDI_SEARCH_URL is not set: the owner sets it to the SearXNG's address (with json among its search formats)."
		}
	case ProviderTavily:
		s.key = TavilyKey
		if base == "" {
			base = tavilyURL
		}
	case ProviderBrave:
		s.key = BraveKey
		if base == "" {
			base = braveURL
		}
	default:
		s.problem = fmt.Sprintf("BUDDI_SEARCH_PROVIDER %q is not a provider this buddi speaks to: the owner sets it to tavily, brave or searxng.", cfg.Provider)
	}
	if s.problem == "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			s.problem = fmt.Sprintf("BUDDI_SEARCH_URL %q is not an http or https URL without credentials: the owner sets it to the search backend's address.", cfg.URL)
		} else {
			s.base = u
		}
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

// apiKey reads the provider's key from the vault; its error is one sentence for the model
// and the owner, naming the entry and never a value.
func (s *searcher) apiKey() (string, error) {
	get := s.cfg.Secret
	if get == nil {
		if b := s.bound.Load(); b != nil {
			get = *b
		}
	}
	if get == nil {
		return "", fmt.Errorf("the %s key cannot be read here: buddi serve reads it from the vault entry %s", s.cfg.Provider, s.key)
	}
	v, err := get(s.key)
	if err != nil || strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("the vault has no %s (or is locked): the owner sets it with `buddi vault set %s`", s.key, s.key)
	}
	return strings.TrimSpace(v), nil
}

func (s *searcher) status() SearchStatus {
	if s.base == nil {
		return SearchStatus{Provider: s.cfg.Provider, Problem: s.problem}
	}
	if s.key != "" {
		if _, err := s.apiKey(); err != nil {
			return SearchStatus{Provider: s.cfg.Provider, Host: s.base.Host, Problem: upperFirst(err.Error()) + "."}
		}
	}
	return SearchStatus{Configured: true, Provider: s.cfg.Provider, Host: s.base.Host}
}

// upperFirst makes a clause a sentence's beginning.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// searxngAnswer is the part of SearXNG's JSON answer read.
type searxngAnswer struct {
	Results []struct {
		URL     string `json:"url"`
		Title   string `json:"title"`
		Content string `json:"content"`
	} `json:"results"`
}

// tavilyAnswer is the part of Tavily's JSON answer read.
type tavilyAnswer struct {
	Results []struct {
		URL     string `json:"url"`
		Title   string `json:"title"`
		Content string `json:"content"`
	} `json:"results"`
}

// braveAnswer is the part of Brave's JSON answer read: its web results.
type braveAnswer struct {
	Web *struct {
		Results []struct {
			URL         string `json:"url"`
			Title       string `json:"title"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

// hit is one result as a backend gave it, before it is checked and bounded.
type hit struct{ url, title, snippet string }

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
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := s.request(ctx, query)
	if err != nil {
		return fail(upperFirst(err.Error()) + ".")
	}
	req.Header.Set("User-Agent", "buddi/"+version.Version+" (web.search)")
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fail(fmt.Sprintf("The search backend at %s did not answer: %v.", s.base.Host, errors.Unwrap(err)))
	}
	defer resp.Body.Close()
	f.Status = resp.StatusCode
	body, err := io.ReadAll(resp.Body)
	f.Bytes = int64(len(body))
	if err != nil {
		return fail(fmt.Sprintf("The search backend's answer could not be read: %v.", err))
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case s.cfg.Provider == ProviderSearXNG:
		return fail(fmt.Sprintf("The search backend at %s answered %s (a SearXNG must list json among its search formats).", s.base.Host, resp.Status))
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fail(fmt.Sprintf("The %s search API at %s refused the key (%s): the owner checks the vault entry %s.", s.cfg.Provider, s.base.Host, resp.Status, s.key))
	case resp.StatusCode == http.StatusTooManyRequests:
		return fail(fmt.Sprintf("The %s search API at %s says the key's quota or rate is spent (%s): search again later.", s.cfg.Provider, s.base.Host, resp.Status))
	default:
		return fail(fmt.Sprintf("The %s search API at %s answered %s.", s.cfg.Provider, s.base.Host, resp.Status))
	}
	hits, err := s.parse(body)
	if err != nil {
		return fail(fmt.Sprintf("The search backend at %s did not answer with %s's JSON.", s.base.Host, s.cfg.Provider))
	}
	out := Results{Query: query, Results: []Result{}, Source: Source, Untrusted: Rule}
	for _, r := range hits {
		if len(out.Results) == maxResults {
			break
		}
		link, err := url.Parse(r.url)
		if err != nil || (link.Scheme != "http" && link.Scheme != "https") || link.Host == "" || link.User != nil {
			continue
		}
		out.Results = append(out.Results, Result{
			Title:     readable.Bound(readable.Collapse(readable.Clean(r.title)), readable.MaxTitle),
			URL:       readable.Bound(link.String(), 2048),
			Snippet:   readable.Bound(readable.Collapse(readable.Clean(r.snippet)), maxSnippet),
			Source:    Source,
			Untrusted: Rule,
		})
	}
	f.Outcome = OutcomeOK
	return out, f, nil
}

// request is the backend's own request for query.
func (s *searcher) request(ctx context.Context, query string) (*http.Request, error) {
	switch s.cfg.Provider {
	case ProviderTavily:
		key, err := s.apiKey()
		if err != nil {
			return nil, err
		}
		body, _ := json.Marshal(map[string]any{"query": query, "max_results": maxResults, "search_depth": "basic"})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base.JoinPath("search").String(), bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("the search backend cannot be asked: %v", err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		return req, nil
	case ProviderBrave:
		key, err := s.apiKey()
		if err != nil {
			return nil, err
		}
		u := s.base.JoinPath("res", "v1", "web", "search")
		u.RawQuery = url.Values{"q": {query}, "count": {fmt.Sprint(maxResults)}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("the search backend cannot be asked: %v", err)
		}
		req.Header.Set("X-Subscription-Token", key)
		return req, nil
	}
	u := s.base.JoinPath("search")
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("the search backend cannot be asked: %v", err)
	}
	return req, nil
}

// parse reads the backend's answer as its hits, in its order.
func (s *searcher) parse(body []byte) ([]hit, error) {
	var hits []hit
	switch s.cfg.Provider {
	case ProviderTavily:
		var ans tavilyAnswer
		if err := json.Unmarshal(body, &ans); err != nil {
			return nil, err
		}
		for _, r := range ans.Results {
			hits = append(hits, hit{r.URL, r.Title, r.Content})
		}
	case ProviderBrave:
		var ans braveAnswer
		if err := json.Unmarshal(body, &ans); err != nil {
			return nil, err
		}
		if ans.Web != nil {
			for _, r := range ans.Web.Results {
				// Brave marks the words matched with <strong>: the snippet is text.
				hits = append(hits, hit{r.URL, stripTags(r.Title), stripTags(r.Description)})
			}
		}
	default:
		var ans searxngAnswer
		if err := json.Unmarshal(body, &ans); err != nil {
			return nil, err
		}
		for _, r := range ans.Results {
			hits = append(hits, hit{r.URL, r.Title, r.Content})
		}
	}
	return hits, nil
}

// stripTags is the text of an HTML fragment: its tags dropped, its entities read.
func stripTags(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}
