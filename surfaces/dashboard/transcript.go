package dashboard

import (
	"encoding/json"

	"buddi/core/conversation"
	"buddi/internal/markdown"
)

// withHTML adds, to each text part of the model's messages, "html": the part's Markdown
// rendered and sanitised (internal/markdown), which is the only HTML the page inserts. The
// text stays next to it; every other entry and field is passed on as stored.
func withHTML(entries []conversation.Entry) []conversation.Entry {
	out := make([]conversation.Entry, len(entries))
	for i, e := range entries {
		out[i] = e
		if e.Kind != conversation.KindAssistant {
			continue
		}
		if body, ok := renderParts(e.Body); ok {
			out[i].Body = body
		}
	}
	return out
}

// renderParts returns body with "html" beside the "text" of each text part, or false when
// body is not the {"parts": […]} of a model's message (it is then served as stored).
func renderParts(body json.RawMessage) (json.RawMessage, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return nil, false
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(msg["parts"], &parts) != nil {
		return nil, false
	}
	for _, p := range parts {
		var typ, text string
		if json.Unmarshal(p["type"], &typ) != nil || typ != "text" || json.Unmarshal(p["text"], &text) != nil {
			continue
		}
		h, err := json.Marshal(markdown.HTML(text))
		if err != nil {
			return nil, false
		}
		p["html"] = h
	}
	raw, err := json.Marshal(parts)
	if err != nil {
		return nil, false
	}
	msg["parts"] = raw
	out, err := json.Marshal(msg)
	if err != nil {
		return nil, false
	}
	return out, true
}
