package telegram

import (
	"encoding/json"

	"buddi/core/views"
)

// canvasText is a view the agent showed (canvas.show) degraded to a message, Telegram
// having no canvas: a table as aligned lines in a code block, a record as "key: value"
// lines, a diff as a diff block, a link as its address. "" for a view that is not one of
// those (a document or a terminal's text would only repeat what the reply says), one the
// agent did not show, a failure, or none.
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
	switch v.Renderer {
	case views.Table, views.KeyValue, views.Bars, views.Timeseries, views.Diff, views.Preview:
		return clip(views.Text(&v, true))
	}
	return ""
}
