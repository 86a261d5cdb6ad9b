package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"buddi/internal/readable"
	"buddi/plugins"
)

var (
	_ plugins.Tool = (*readTool)(nil)
	_ plugins.Tool = (*searchTool)(nil)
	_ plugins.Tool = (*statusTool)(nil)
)

// readTool is web.read.
type readTool struct{ p *Plugin }

// readArgs are web.read's arguments.
type readArgs struct {
	URL     string `json:"url"`
	Purpose string `json:"purpose"`
}

// Spec declares web.read: auto, a network read, the rule in its description.
func (t *readTool) Spec() plugins.Spec {
	l := t.p.reader.Limits()
	return plugins.Spec{
		Name: Name + ".read",
		Description: fmt.Sprintf("Fetch one public web page (http or https) and return its readable text: title, headings, paragraphs, list items and links' text, "+
			"without scripts, styles, comments or page chrome; at most %s of text from a page of at most %s, within %s. "+
			"Only HTML and plain text are read. This machine, the owner's network and private addresses are never reached. "+
			"Every fetch is recorded with its purpose. %s", sizeText(l.MaxText), size(l.MaxBytes), l.Timeout, Rule),
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"url":     {"type": "string", "minLength": 1, "maxLength": 2048, "description": "The page's absolute http or https URL."},
				"purpose": {"type": "string", "minLength": 1, "maxLength": %d, "description": "Why you read it, in a few words (recorded for the owner)."}
			},
			"required": ["url", "purpose"],
			"additionalProperties": false
		}`, maxPurpose)),
		Effects: []plugins.Effect{plugins.EffectNetRead},
		Tier:    plugins.TierAuto,
		Timeout: l.Timeout + 10*time.Second,
	}
}

// Describe names the page and the purpose; it refuses nothing, so a blocked address is
// recorded when the call executes.
func (t *readTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a readArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Envelope{}, fmt.Errorf("web.read: %w", err)
	}
	return plugins.Envelope{
		Summary: readable.Bound("Read "+a.URL, 300),
		Effects: []plugins.Effect{plugins.EffectNetRead},
		Targets: []string{hostOf(a.URL)},
		Detail:  map[string]any{"url": a.URL, "purpose": a.Purpose},
		Preview: readable.Bound(fmt.Sprintf("Read %s (%s)", a.URL, a.Purpose), 600),
	}, nil
}

// Execute reads the page and records the fetch. A page that is not read is an error result
// with one sentence; a fetch that cannot be recorded returns nothing of the page.
func (t *readTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a readArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, fmt.Errorf("web.read: %w", err)
	}
	if t.p.deps.Pool == nil {
		return plugins.Result{}, ErrNoDatabase
	}
	page, readErr, recordErr := t.p.Read(ctx, Request{
		Agent: call.Agent, Purpose: strings.TrimSpace(a.Purpose), URL: a.URL,
		ConversationID: call.ConversationID, RunID: call.RunID,
	})
	if recordErr != nil {
		return plugins.Result{}, recordErr
	}
	if readErr != nil {
		return plugins.Result{Text: readErr.Error(), IsError: true}, nil
	}
	data, err := json.Marshal(page)
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: string(data), Data: data}, nil
}

// statusTool is web.status.
type statusTool struct{ p *Plugin }

// Spec declares web.status: auto, reads nothing outside buddi.
func (t *statusTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name:        Name + ".status",
		Description: "Say what the web tools can do here: whether the owner configured a search backend, and web.read's limits. " + Rule,
		Schema:      json.RawMessage(`{"type": "object", "properties": {}, "additionalProperties": false}`),
		Effects:     []plugins.Effect{plugins.EffectRead},
		Tier:        plugins.TierAuto,
	}
}

// Describe says what it reads.
func (t *statusTool) Describe(context.Context, plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: "Read the web tools' status", Effects: []plugins.Effect{plugins.EffectRead}, Preview: "Read the web tools' status"}, nil
}

// Execute returns the status.
func (t *statusTool) Execute(context.Context, plugins.Call, *plugins.Envelope) (plugins.Result, error) {
	data, err := json.Marshal(t.p.Status())
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: string(data), Data: data}, nil
}

// searchTool is web.search.
type searchTool struct{ p *Plugin }

// searchArgs are web.search's arguments.
type searchArgs struct {
	Query   string `json:"query"`
	Purpose string `json:"purpose"`
}

// Spec declares web.search: auto, a network read of the owner's search backend.
func (t *searchTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".search",
		Description: fmt.Sprintf("Search the web through the owner's search backend and return up to %d results, each with its title, url and snippet; read a result with web.read. "+
			"web.status says whether a backend is configured. Every search is recorded with its purpose. %s", maxResults, Rule),
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"query":   {"type": "string", "minLength": 1, "maxLength": %d, "description": "What to search for."},
				"purpose": {"type": "string", "minLength": 1, "maxLength": %d, "description": "Why you search, in a few words (recorded for the owner)."}
			},
			"required": ["query", "purpose"],
			"additionalProperties": false
		}`, maxQuery, maxPurpose)),
		Effects: []plugins.Effect{plugins.EffectNetRead},
		Tier:    plugins.TierAuto,
		Timeout: t.p.reader.Limits().Timeout + 10*time.Second,
	}
}

// Describe names the query.
func (t *searchTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a searchArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Envelope{}, fmt.Errorf("web.search: %w", err)
	}
	return plugins.Envelope{
		Summary: readable.Bound("Search the web for "+a.Query, 300),
		Effects: []plugins.Effect{plugins.EffectNetRead},
		Detail:  map[string]any{"query": a.Query, "purpose": a.Purpose},
		Preview: readable.Bound(fmt.Sprintf("Search the web for %q (%s)", a.Query, a.Purpose), 600),
	}, nil
}

// Execute searches and records the search.
func (t *searchTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a searchArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, fmt.Errorf("web.search: %w", err)
	}
	if t.p.deps.Pool == nil {
		return plugins.Result{}, ErrNoDatabase
	}
	at := t.p.deps.Now()
	res, f, err := t.p.search.search(ctx, a.Query)
	if errors.Is(err, errNoSearch) {
		return plugins.Result{Text: err.Error(), IsError: true}, nil
	}
	if rerr := t.p.store.Add(context.WithoutCancel(ctx), Record{
		Agent: call.Agent, At: at, Tool: Name + ".search", Purpose: strings.TrimSpace(a.Purpose),
		ConversationID: call.ConversationID, RunID: call.RunID, Fetch: f,
	}); rerr != nil {
		return plugins.Result{}, rerr
	}
	if err != nil {
		return plugins.Result{Text: err.Error(), IsError: true}, nil
	}
	data, err := json.Marshal(res)
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: string(data), Data: data}, nil
}

// sizeText says n bytes of text in thousands.
func sizeText(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%d KB", n/1000)
	}
	return fmt.Sprintf("%d bytes", n)
}
