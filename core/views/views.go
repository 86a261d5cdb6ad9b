package views

import (
	"encoding/json"
	"regexp"
	"strings"

	"buddi/core/redact"
	"buddi/plugins"
)

// ShowTool is the agent's explicit way to draw: its result carries the view it asked for.
const ShowTool = "canvas.show"

// Where a view came from.
const (
	FromExplicit   = "explicit"   // canvas.show
	FromDescriptor = "descriptor" // the plugin's descriptor
	FromInferred   = "inferred"   // the result's shape
	FromFailure    = "failure"    // the call failed
	FromPending    = "pending"    // the call waits for the owner
)

// Bounds on what a view carries.
const (
	MaxRows    = 200       // a table's rows
	MaxColumns = 12        // a table's columns
	MaxPairs   = 100       // a record's keys
	MaxPoints  = 500       // a series' points or bars
	MaxText    = 64 * 1024 // a document's, a diff's or a terminal's text
	MaxValue   = 64 * 1024 // a structured value's JSON
)

// View is what the canvas draws for one result: a renderer and the data it needs, already
// extracted (the page follows no path and runs no plugin code).
type View struct {
	Renderer  string          `json:"renderer"`            // one of Renderers
	Source    string          `json:"source"`              // explicit, descriptor, inferred, failure, pending
	Tool      string          `json:"tool,omitempty"`      // the tool whose result it is
	Title     string          `json:"title,omitempty"`     // the tab's name, when the result gives one
	Failed    bool            `json:"failed,omitempty"`    // the call failed
	Of        string          `json:"of,omitempty"`        // canvas.show: the call whose result it redraws
	Text      string          `json:"text,omitempty"`      // document, diff, terminal, preview's line, envelope's preview
	Columns   []string        `json:"columns,omitempty"`   // table
	Rows      [][]string      `json:"rows,omitempty"`      // table: cells as printed
	Pairs     []Pair          `json:"pairs,omitempty"`     // keyvalue
	Points    []Point         `json:"points,omitempty"`    // timeseries, bars
	Artifact  string          `json:"artifact,omitempty"`  // image: the artifact's id
	URL       string          `json:"url,omitempty"`       // preview
	Value     json.RawMessage `json:"value,omitempty"`     // structured
	Truncated bool            `json:"truncated,omitempty"` // rows, points or text were left out
}

// Pair is one key of a record and its value as printed.
type Pair struct {
	Key    string `json:"key"`              // the key
	Value  string `json:"value"`            // its value as printed
	Number bool   `json:"number,omitempty"` // the value is a number, printed as written
}

// Point is one point of a series or one bar: its label and its number as written.
type Point struct {
	Label string `json:"label"` // the x value or the bar's name, as printed
	Value string `json:"value"` // the number, as written
}

// Shown is what canvas.show puts in its result's data, under "canvas": the agent's own
// descriptor and the data it draws.
type Shown struct {
	Renderer string            `json:"renderer"`          // the renderer asked for
	Title    string            `json:"title,omitempty"`   // the tab's name
	Paths    map[string]string `json:"paths,omitempty"`   // paths into Data, by slot
	Options  map[string]any    `json:"options,omitempty"` // the renderer's settings
	Data     json.RawMessage   `json:"data"`              // what is drawn
	Of       string            `json:"of,omitempty"`      // the call whose result it draws, if any
}

// Result is one tool answer as the transcript and the live stream carry it.
type Result struct {
	Tool    string          // the tool's name
	IsError bool            // the answer reports a failure
	Content string          // what the model read
	Data    json.RawMessage // the structured output, if any
}

// Input is what Resolve decides from.
type Input struct {
	Result
	// Descriptor is the plugin's descriptor for the tool, if it has one.
	Descriptor *plugins.ViewDescriptor
	// Pending, when set, is the envelope of the call, which waits for the owner: it is
	// drawn instead of anything else.
	Pending *plugins.Envelope
}

// Resolve returns the view of one result, or nil when the result has nothing to draw (it
// earns no tab). Precedence, highest first: a call waiting for the owner (its envelope), an
// explicit canvas.show, the descriptor, inference from shape. A failure always earns a tab.
func Resolve(in Input) *View {
	if in.Pending != nil {
		return &View{Renderer: Envelope, Source: FromPending, Tool: in.Tool, Title: in.Pending.Summary, Text: clip(in.Pending.Preview, MaxText)}
	}
	v := resolve(in)
	if in.IsError {
		if v == nil || v.Renderer != Terminal {
			v = &View{Renderer: Document, Text: clip(in.Content, MaxText)}
		}
		v.Source, v.Failed = FromFailure, true
		if strings.TrimSpace(v.Text) == "" {
			v.Text = "It failed, and said nothing more."
		}
	}
	if v != nil {
		v.Tool = in.Tool
	}
	return v
}

func resolve(in Input) *View {
	root, rootOK := rootOf(in.Result)
	if in.Tool == ShowTool {
		var d struct {
			Canvas *Shown `json:"canvas"`
		}
		if json.Unmarshal(in.Data, &d) == nil && d.Canvas != nil {
			s := d.Canvas
			val, err := parse(s.Data)
			if err != nil {
				return nil
			}
			r, ok := Canonical(s.Renderer)
			if !ok {
				r = Structured // received data: an unknown renderer is drawn as structured
			}
			v := apply(r, s.Paths, s.Options, val, in.Content, true)
			if v == nil {
				return nil
			}
			v.Source, v.Of = FromExplicit, s.Of
			if s.Title != "" {
				v.Title = clip(s.Title, 200)
			}
			return v
		}
		return nil
	}
	if in.Descriptor != nil {
		r, ok := Canonical(in.Descriptor.Renderer)
		if !ok {
			r = Structured
		}
		if !rootOK {
			return nil
		}
		v := apply(r, in.Descriptor.Paths, in.Descriptor.Options, root, in.Content, false)
		if v != nil {
			v.Source = FromDescriptor
		}
		return v
	}
	if !rootOK {
		return nil
	}
	v := infer(root)
	if v != nil {
		v.Source = FromInferred
	}
	return v
}

// rootOf is the result a descriptor's paths start from: the structured output when there is
// one, else the model's text as JSON when it is a JSON object or array, else that text.
func rootOf(r Result) (any, bool) {
	if len(r.Data) > 0 {
		if v, err := parse(r.Data); err == nil {
			return v, true
		}
	}
	t := strings.TrimSpace(r.Content)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if v, err := parse([]byte(t)); err == nil {
			return v, true
		}
	}
	if t == "" {
		return nil, false
	}
	return r.Content, true
}

// Scrub returns v as JSON with every stored secret taken out by scrub (nil scrubs nothing):
// how a view leaves core.
func Scrub(v *View, scrub redact.Scrubber) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	if scrub != nil {
		b = scrub.JSON(b)
	}
	return b
}

var (
	hunk    = regexp.MustCompile(`(?m)^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`)
	heading = regexp.MustCompile(`^(#{1,6} |\s*([-*+]|\d+[.)]) |` + "```" + `)`)
	uuid    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// HasHunks reports whether text holds a unified diff's hunks.
func HasHunks(text string) bool { return hunk.MatchString(text) }

// structuredText reports whether text is a document by its shape: at least eight lines, two
// or more of them headings, list items or code fences. A wall of prose is not.
func structuredText(text string) bool {
	lines, marked := 0, 0
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines++
		if heading.MatchString(l) {
			marked++
		}
	}
	return lines >= 8 && marked >= 2
}
