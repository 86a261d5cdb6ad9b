package dashboard

import (
	"encoding/json"

	"buddi/core/conversation"
	"buddi/core/redact"
	"buddi/core/views"
	"buddi/plugins"
)

// withViews adds, to each tool answer of the transcript, "view": what the canvas draws for
// it (core/views: canvas.show, the tool's descriptor found by descriptor, else its shape),
// scrubbed by scrub. An answer with nothing to draw gets none.
func withViews(entries []conversation.Entry, descriptor func(tool string) (plugins.ViewDescriptor, bool), scrub redact.Scrubber) []conversation.Entry {
	for i, e := range entries {
		if e.Kind != conversation.KindTool {
			continue
		}
		var b map[string]json.RawMessage
		if json.Unmarshal(e.Body, &b) != nil {
			continue
		}
		var body struct {
			Tool    string          `json:"tool"`
			Content string          `json:"content"`
			IsError bool            `json:"is_error"`
			Data    json.RawMessage `json:"data"`
		}
		if json.Unmarshal(e.Body, &body) != nil {
			continue
		}
		in := views.Input{Result: views.Result{Tool: body.Tool, IsError: body.IsError, Content: body.Content, Data: body.Data}}
		if descriptor != nil {
			if d, ok := descriptor(body.Tool); ok {
				in.Descriptor = &d
			}
		}
		v := views.Scrub(views.Resolve(in), scrub)
		if v == nil {
			continue
		}
		b["view"] = v
		if out, err := json.Marshal(b); err == nil {
			entries[i].Body = out
		}
	}
	return entries
}
