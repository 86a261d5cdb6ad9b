package run

import (
	"encoding/json"
	"fmt"

	"buddi/core/conversation"
	"buddi/runtime/provider"
)

// The bodies of transcript entries, as this package writes them.
type (
	textBody struct {
		Text    string `json:"text"`
		Surface string `json:"surface,omitempty"`
	}
	assistantBody struct {
		Parts []partBody `json:"parts"`
	}
	partBody struct {
		Type string          `json:"type"` // text or tool_call
		Text string          `json:"text,omitempty"`
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name,omitempty"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	toolBody struct {
		CallID  string `json:"call_id"`
		Tool    string `json:"tool"`
		Content string `json:"content"`
		IsError bool   `json:"is_error,omitempty"`
		// Asked marks the answer of a successful call of a tool that waits for the owner:
		// every later call of the run is blocked.
		Asked bool `json:"asked,omitempty"`
		// Data is the tool's structured output for the surfaces (a renderer and what it
		// draws); the model reads Content only.
		Data json.RawMessage `json:"data,omitempty"`
	}
)

func assistantOf(m provider.Message) assistantBody {
	var b assistantBody
	for _, p := range m.Parts {
		switch p := p.(type) {
		case provider.Text:
			if p.Text != "" {
				b.Parts = append(b.Parts, partBody{Type: "text", Text: p.Text})
			}
		case provider.ToolCall:
			args := p.Args
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			b.Parts = append(b.Parts, partBody{Type: "tool_call", ID: p.ID, Name: p.Name, Args: args})
		}
	}
	return b
}

func (b assistantBody) calls() []provider.ToolCall {
	var out []provider.ToolCall
	for _, p := range b.Parts {
		if p.Type == "tool_call" {
			out = append(out, provider.ToolCall{ID: p.ID, Name: p.Name, Args: p.Args})
		}
	}
	return out
}

// state is what the transcript says about one run.
type state struct {
	last       *assistantBody // the run's latest model message, nil before its first step
	unanswered []provider.ToolCall
	turns      int  // model steps taken
	asked      bool // a call waiting for the owner succeeded: later calls are blocked
	calledTool bool // a call of the run was answered
}

// analyse reads the run's state from the conversation's entries.
func analyse(entries []conversation.Entry, runID string) (state, error) {
	var st state
	answered := map[string]bool{}
	for _, e := range entries {
		if e.RunID != runID {
			continue
		}
		switch e.Kind {
		case conversation.KindAssistant:
			var b assistantBody
			if err := json.Unmarshal(e.Body, &b); err != nil {
				return st, fmt.Errorf("entry %d: %w", e.ID, err)
			}
			st.last = &b
			st.turns++
		case conversation.KindTool:
			var b toolBody
			if err := json.Unmarshal(e.Body, &b); err != nil {
				return st, fmt.Errorf("entry %d: %w", e.ID, err)
			}
			answered[b.CallID] = true
			st.calledTool = true
			st.asked = st.asked || b.Asked
		}
	}
	if st.last != nil {
		for _, c := range st.last.calls() {
			if !answered[c.ID] {
				st.unanswered = append(st.unanswered, c)
			}
		}
	}
	return st, nil
}

// messages turns the transcript into the provider's messages: consecutive entries of one
// role merge, tool answers come first in a user message, and owner input that joined a run
// reads "The owner adds: …". extra (leased input) joins the last user message.
func messages(entries []conversation.Entry, extra []string) ([]provider.Message, error) {
	var out []provider.Message
	add := func(role provider.Role, parts ...provider.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = mergeParts(out[n-1].Parts, parts)
			return
		}
		out = append(out, provider.Message{Role: role, Parts: parts})
	}
	for _, e := range entries {
		switch e.Kind {
		case conversation.KindUser, conversation.KindOwnerAdds, conversation.KindMarker:
			var b textBody
			if err := json.Unmarshal(e.Body, &b); err != nil {
				return nil, fmt.Errorf("entry %d: %w", e.ID, err)
			}
			text := b.Text
			switch e.Kind {
			case conversation.KindOwnerAdds:
				text = "The owner adds: " + text
			case conversation.KindMarker:
				text = "[buddi: " + text + "]"
			}
			add(provider.RoleUser, provider.Text{Text: text})
		case conversation.KindAssistant:
			var b assistantBody
			if err := json.Unmarshal(e.Body, &b); err != nil {
				return nil, fmt.Errorf("entry %d: %w", e.ID, err)
			}
			var parts []provider.Part
			for _, p := range b.Parts {
				if p.Type == "text" {
					parts = append(parts, provider.Text{Text: p.Text})
				} else {
					parts = append(parts, provider.ToolCall{ID: p.ID, Name: p.Name, Args: p.Args})
				}
			}
			add(provider.RoleAssistant, parts...)
		case conversation.KindTool:
			var b toolBody
			if err := json.Unmarshal(e.Body, &b); err != nil {
				return nil, fmt.Errorf("entry %d: %w", e.ID, err)
			}
			add(provider.RoleUser, provider.ToolResult{CallID: b.CallID, Content: b.Content, IsError: b.IsError})
		}
	}
	for _, t := range extra {
		add(provider.RoleUser, provider.Text{Text: "The owner adds: " + t})
	}
	// The first message must be the owner's.
	for len(out) > 0 && out[0].Role != provider.RoleUser {
		out = out[1:]
	}
	return out, nil
}

// mergeParts appends more to parts, keeping tool results ahead of text.
func mergeParts(parts, more []provider.Part) []provider.Part {
	all := append(append([]provider.Part{}, parts...), more...)
	var results, rest []provider.Part
	for _, p := range all {
		if _, ok := p.(provider.ToolResult); ok {
			results = append(results, p)
		} else {
			rest = append(rest, p)
		}
	}
	return append(results, rest...)
}
