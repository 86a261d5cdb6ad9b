package telegram

import (
	"encoding/json"
	"strings"

	"buddi/core/views"
)

// canvasText is a view the agent showed (canvas.show) degraded to a message, Telegram
// having no canvas, whatever its renderer, as canvas.show tells the agent: a table as
// aligned lines in a code block, a record as "key: value" lines, a diff or code as a code
// block, a document as its opening lines, a link as its address, a value as its JSON, each
// cut where views.Text cuts it and to one message; an image as one line naming it and
// saying it is on the dashboard. "" for a view the agent did not show, a failure, or none.
func canvasText(view json.RawMessage) string {
	if len(view) == 0 {
		return ""
	}
	var v views.View
	// Only what the agent chose to show (canvas.show) is sent: every table a tool answered
	// with, sent beside a reply on a phone, would bury the point under detail.
	if json.Unmarshal(view, &v) != nil || v.Failed || v.Source != views.FromExplicit {
		return ""
	}
	if v.Renderer == views.Image {
		// Telegram gets no image: its name, as written (no Markdown of it becomes a link),
		// and where to see it. The artifact's id would tell the owner nothing.
		line := "An image, shown on the dashboard."
		if title := strings.Join(strings.Fields(v.Title), " "); title != "" {
			line = literal(title) + ": an image, shown on the dashboard."
		}
		return clip(line)
	}
	return clip(views.Text(&v, true))
}
