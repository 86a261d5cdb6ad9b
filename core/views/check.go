package views

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"buddi/plugins"
)

// The renderers: the closed set the canvas draws.
const (
	Timeseries = "timeseries" // points: a label (x) and a number (y) each
	Table      = "table"      // rows under columns
	Bars       = "bars"       // labelled numbers
	KeyValue   = "keyvalue"   // a record: keys and values
	Document   = "document"   // text to read (Markdown is shown as text)
	Diff       = "diff"       // a unified diff, its lines marked added or removed
	Terminal   = "terminal"   // monospaced text: output, code
	Image      = "image"      // an artifact that is an image
	Preview    = "preview"    // a link: its address, title and a line of text
	Envelope   = "envelope"   // a call waiting for the owner: its summary and preview
	Structured = "structured" // any JSON value, drawn as it is
)

// Renderers returns the closed set, in a fixed order.
func Renderers() []string {
	return []string{Timeseries, Table, Bars, KeyValue, Document, Diff, Terminal, Image, Preview, Envelope, Structured}
}

// aliases map the names a plugin author may know from elsewhere onto the closed set.
var aliases = map[string]string{
	"list":         Table,
	"card":         KeyValue,
	"key-value":    KeyValue,
	"key_value":    KeyValue,
	"code":         Terminal,
	"markdown":     Document,
	"link":         Preview,
	"link preview": Preview,
	"link-preview": Preview,
	"link_preview": Preview,
}

// Canonical returns the renderer name stands for (itself, or what an alias maps onto), and
// false when it is neither.
func Canonical(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if slices.Contains(Renderers(), n) {
		return n, true
	}
	r, ok := aliases[n]
	return r, ok
}

// Names returns every name Canonical accepts, sorted: the renderers and their aliases.
func Names() []string {
	out := Renderers()
	for a := range aliases {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// slots are each renderer's paths, the first being where its data is.
var slots = map[string][]string{
	Timeseries: {"points", "x", "y", "title"},
	Table:      {"rows", "title"},
	Bars:       {"items", "label", "value", "title"},
	KeyValue:   {"record", "title"},
	Document:   {"text", "title"},
	Diff:       {"text", "title"},
	Terminal:   {"text", "title"},
	Image:      {"artifact", "title"},
	Preview:    {"url", "title", "text"},
	Envelope:   {"summary", "preview", "title"},
	Structured: {"value", "title"},
}

// options are each renderer's settings.
var options = map[string][]string{
	Table: {"columns"},
}

// FieldError is a descriptor's fault: the field that is wrong and why.
type FieldError struct {
	Field  string // "Tool", "Renderer", "Paths[rows]", "Options[columns]"
	Reason string // what is wrong, and what to write instead
}

// Error names the field, then the problem.
func (e *FieldError) Error() string {
	return fmt.Sprintf("view descriptor field %s: %s", e.Field, e.Reason)
}

// Check validates d as a descriptor of plugin, whose tools are named in tools: the tool is
// one of them, the renderer is in the closed set (or an alias), every path is a slot of the
// renderer and parses, every option is a setting of it. The error is a *FieldError.
func Check(plugin string, tools []string, d plugins.ViewDescriptor) error {
	if d.Tool == "" {
		return &FieldError{Field: "Tool", Reason: "is empty; name the tool whose results it draws"}
	}
	if !strings.HasPrefix(d.Tool, plugin+".") || !slices.Contains(tools, d.Tool) {
		return &FieldError{Field: "Tool", Reason: fmt.Sprintf("%q is not a tool of plugin %s; a descriptor draws one of its own plugin's tools", d.Tool, plugin)}
	}
	r, ok := Canonical(d.Renderer)
	if !ok {
		return &FieldError{Field: "Renderer", Reason: fmt.Sprintf("%q is not a renderer; use one of %s", d.Renderer, strings.Join(Names(), ", "))}
	}
	for _, k := range sortedKeys(d.Paths) {
		if !slices.Contains(slots[r], k) {
			return &FieldError{Field: "Paths[" + k + "]", Reason: fmt.Sprintf("%s has no slot %q; its slots are %s", r, k, strings.Join(slots[r], ", "))}
		}
		if _, err := parsePath(d.Paths[k]); err != nil {
			return &FieldError{Field: "Paths[" + k + "]", Reason: err.Error()}
		}
	}
	for _, k := range sortedKeys(d.Options) {
		if !slices.Contains(options[r], k) {
			return &FieldError{Field: "Options[" + k + "]", Reason: fmt.Sprintf("%q is not a setting of %s", k, r)}
		}
	}
	if c, ok := d.Options["columns"]; ok {
		cols, ok := stringList(c)
		if !ok || len(cols) == 0 {
			return &FieldError{Field: "Options[columns]", Reason: "must be a non-empty list of paths within a row"}
		}
		for _, p := range cols {
			if _, err := parsePath(p); err != nil || p == "" {
				return &FieldError{Field: "Options[columns]", Reason: fmt.Sprintf("column %q is not a path within a row", p)}
			}
		}
	}
	return nil
}

// stringList reads a list of strings from a Go or JSON-decoded value.
func stringList(v any) ([]string, bool) {
	switch t := v.(type) {
	case []string:
		return t, true
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
