package telegram

import (
	"encoding/json"

	"buddi/core/views"
)

// canvasText is a tool answer's canvas view degraded to a message, Telegram having no
// canvas: a table as aligned lines in a code block, a record as "key: value" lines, a diff
// as a diff block, a link as its address. "" for a view that is not one of those (a
// document or a terminal's text would only repeat what the reply says), a failure, or none.
func canvasText(view json.RawMessage) string {
	if len(view) == 0 {
		return ""
	}
	var v views.View
	if json.Unmarshal(view, &v) != nil || v.Failed {
		return ""
	}
	switch v.Renderer {
	case views.Table, views.KeyValue, views.Bars, views.Timeseries, views.Diff, views.Preview:
		return clip(views.Text(&v, true))
	}
	return ""
}
