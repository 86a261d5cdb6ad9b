package views

import (
	"encoding/json"
	"net/url"
	"strings"
)

// apply draws root with renderer r and the descriptor's paths and options, or returns nil
// when there is nothing to draw. content is the model's text, which a text renderer falls
// back on when the structured output holds no text. explicit (canvas.show) draws any
// non-empty record, figures or not.
func apply(r string, paths map[string]string, opts map[string]any, root any, content string, explicit bool) *View {
	slot := func(name string) (any, bool) {
		p, ok := paths[name]
		if !ok {
			return nil, false
		}
		return lookup(root, p)
	}
	v := &View{Renderer: r}
	if t, ok := slot("title"); ok {
		v.Title = clip(cell(t), 200)
	} else if o, ok := root.(*object); ok {
		if t, ok := o.get("title"); ok {
			if s, ok := t.(string); ok {
				v.Title = clip(s, 200)
			}
		}
	}
	switch r {
	case Table:
		rows, ok := slot("rows")
		if !ok {
			if _, given := paths["rows"]; given {
				return nil
			}
			rows = arrayIn(root)
		}
		cols, _ := stringList(opts["columns"])
		if !table(v, rows, cols) {
			return nil
		}
		if !explicit && BlankRows(v.Rows) {
			return nil // columns that are in none of the rows: nothing to draw (canvas.show says so itself)
		}
	case KeyValue:
		rec, ok := slot("record")
		if !ok {
			if _, given := paths["record"]; given {
				return nil
			}
			rec = root
		}
		o, ok := rec.(*object)
		if !ok || !record(v, o) {
			return nil
		}
		if !explicit && !figures(v) {
			return nil // a receipt: a record without a figure
		}
	case Document, Terminal, Diff:
		text, ok := textIn(root, slot, paths, content, r)
		if !ok {
			return nil
		}
		v.Text, v.Truncated = clip(text, MaxText), len(text) > MaxText
		if r == Diff && !HasHunks(v.Text) {
			return nil
		}
	case Timeseries, Bars:
		list, label, value := "points", "x", "y"
		if r == Bars {
			list, label, value = "items", "label", "value"
		}
		items, ok := slot(list)
		if !ok {
			if _, given := paths[list]; given {
				return nil
			}
			items = arrayIn(root)
		}
		if p, ok := paths[label]; ok {
			label = p
		}
		if p, ok := paths[value]; ok {
			value = p
		}
		arr, _ := items.([]any)
		for _, it := range arr {
			l, lok := lookup(it, label)
			n, nok := lookup(it, value)
			num, isNum := n.(json.Number)
			if !lok || !nok || !isNum {
				continue
			}
			if len(v.Points) == MaxPoints {
				v.Truncated = true
				break
			}
			v.Points = append(v.Points, Point{Label: cell(l), Value: string(num)})
		}
		if len(v.Points) == 0 {
			return nil
		}
	case Image:
		p := "artifact"
		if q, ok := paths["artifact"]; ok {
			p = q
		}
		a, _ := lookup(root, p)
		s, _ := a.(string)
		if !uuid.MatchString(s) {
			return nil
		}
		v.Artifact = s
	case Preview:
		p, tp := "url", "text"
		if q, ok := paths["url"]; ok {
			p = q
		}
		if q, ok := paths["text"]; ok {
			tp = q
		}
		a, _ := lookup(root, p)
		s, _ := a.(string)
		u, err := url.Parse(s)
		if s == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil
		}
		v.URL = s
		if t, ok := lookup(root, tp); ok && scalar(t) {
			v.Text = clip(cell(t), 600)
		}
	case Envelope:
		sp, pp := "summary", "preview"
		if q, ok := paths["summary"]; ok {
			sp = q
		}
		if q, ok := paths["preview"]; ok {
			pp = q
		}
		s, _ := lookup(root, sp)
		p, _ := lookup(root, pp)
		if s == nil && p == nil {
			return nil
		}
		if s != nil {
			v.Title = clip(cell(s), 300)
		}
		if p != nil {
			v.Text = clip(cell(p), MaxText)
		}
	default: // Structured
		val, ok := slot("value")
		if !ok {
			if _, given := paths["value"]; given {
				return nil
			}
			val = root
		}
		switch t := val.(type) {
		case *object:
			if len(t.keys) == 0 {
				return nil
			}
		case []any:
			if len(t) == 0 {
				return nil
			}
		case nil:
			return nil
		case string:
			if strings.TrimSpace(t) == "" || !explicit {
				return nil
			}
		default:
			if !explicit {
				return nil
			}
		}
		js := compact(val)
		if len(js) > MaxValue {
			return &View{Renderer: Structured, Title: v.Title, Truncated: true, Value: json.RawMessage(`"(too large to draw)"`)}
		}
		v.Renderer, v.Value = Structured, json.RawMessage(js)
	}
	return v
}

// arrayIn is root when it is an array, else the first array among the fields of root.
func arrayIn(root any) any {
	switch t := root.(type) {
	case []any:
		return t
	case *object:
		for _, k := range t.keys {
			if a, ok := t.vals[k].([]any); ok {
				return a
			}
		}
	}
	return nil
}

// textIn finds the text of a document, diff or terminal view: the slot when given, the
// result when it is text, a "text", "diff", "output" or "content" field, then the model's
// text (when it is not the JSON the result came from).
func textIn(root any, slot func(string) (any, bool), paths map[string]string, content, r string) (string, bool) {
	if t, ok := slot("text"); ok {
		s, ok := t.(string)
		return s, ok && strings.TrimSpace(s) != ""
	}
	if _, given := paths["text"]; given {
		return "", false
	}
	if s, ok := root.(string); ok && strings.TrimSpace(s) != "" {
		return s, true
	}
	if o, ok := root.(*object); ok {
		for _, k := range []string{"text", "diff", "output", "content"} {
			if s, ok := o.vals[k].(string); ok && strings.TrimSpace(s) != "" {
				return s, true
			}
		}
	}
	c := strings.TrimSpace(content)
	if c == "" || strings.HasPrefix(c, "{") || strings.HasPrefix(c, "[") {
		return "", false
	}
	if r == Diff && !HasHunks(content) {
		return "", false
	}
	return content, true
}

// table fills v's columns and rows from rows (an array of objects, or of scalars: a list,
// one column), the columns given or every key in the order first met. False when there is
// no row.
func table(v *View, rows any, cols []string) bool {
	arr, ok := rows.([]any)
	if !ok || len(arr) == 0 {
		return false
	}
	allScalar := true
	for _, r := range arr {
		if !scalar(r) {
			allScalar = false
			break
		}
	}
	if allScalar {
		v.Columns = []string{"value"}
		for i, r := range arr {
			if i == MaxRows {
				v.Truncated = true
				break
			}
			v.Rows = append(v.Rows, []string{cell(r)})
		}
		return true
	}
	if len(cols) == 0 {
		seen := map[string]bool{}
		for _, r := range arr {
			if o, ok := r.(*object); ok {
				for _, k := range o.keys {
					if !seen[k] {
						seen[k] = true
						cols = append(cols, k)
					}
				}
			}
		}
	}
	if len(cols) == 0 {
		return false
	}
	if len(cols) > MaxColumns {
		cols, v.Truncated = cols[:MaxColumns], true
	}
	v.Columns = cols
	for i, r := range arr {
		if i == MaxRows {
			v.Truncated = true
			break
		}
		row := make([]string, len(cols))
		for j, c := range cols {
			if val, ok := lookup(r, c); ok {
				row[j] = cell(val)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return true
}

// BlankRows reports whether every cell of rows is empty: a table's columns that are in none
// of its rows.
func BlankRows(rows [][]string) bool {
	for _, r := range rows {
		for _, c := range r {
			if c != "" {
				return false
			}
		}
	}
	return true
}

// record fills v's pairs from o; false when o has no key.
func record(v *View, o *object) bool {
	for i, k := range o.keys {
		if i == MaxPairs {
			v.Truncated = true
			break
		}
		val := o.vals[k]
		_, num := val.(json.Number)
		v.Pairs = append(v.Pairs, Pair{Key: k, Value: cell(val), Number: num})
	}
	return len(v.Pairs) > 0
}

// figures reports whether a record carries a number that is a figure: not an identifier
// or a version (id, note_id, draftId, version, revision), which is what a receipt carries.
func figures(v *View) bool {
	for _, p := range v.Pairs {
		if p.Number && !identifier(p.Key) {
			return true
		}
	}
	return false
}

// identifier reports whether key names an identifier or a version rather than a quantity.
func identifier(key string) bool {
	k := strings.ToLower(key)
	switch {
	case k == "id", k == "uid", k == "version", k == "revision", k == "rev":
		return true
	case strings.HasSuffix(k, "_id"), strings.HasSuffix(k, "-id"), strings.HasSuffix(k, "_version"), strings.HasSuffix(k, "_revision"):
		return true
	}
	return len(key) > 2 && strings.HasSuffix(key, "Id")
}

// Columns returns the keys of the rows at rowsPath in data ("" takes the first array, as a
// table does), in the order first met: a table's columns, frozen before the data is stored
// where its objects' key order is not kept (jsonb). Nil when there are no such rows.
func Columns(data json.RawMessage, rowsPath string) []string {
	root, err := parse(data)
	if err != nil {
		return nil
	}
	rows := arrayIn(root)
	if rowsPath != "" {
		rows, _ = lookup(root, rowsPath)
	}
	arr, _ := rows.([]any)
	var cols []string
	seen := map[string]bool{}
	for _, r := range arr {
		if o, ok := r.(*object); ok {
			for _, k := range o.keys {
				if !seen[k] {
					seen[k] = true
					cols = append(cols, k)
				}
			}
		}
	}
	if len(cols) > MaxColumns {
		cols = cols[:MaxColumns]
	}
	return cols
}
