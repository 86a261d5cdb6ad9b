package views

// infer draws a result that has no descriptor from its shape alone, or returns nil:
//
//   - an array of objects that mostly agree on their keys is a table (its columns the keys
//     more than half the rows have, every row holding at least half of them);
//   - an object with one such array among its fields is that table;
//   - a flat object of scalars is a keyvalue record, drawn only when it carries a figure;
//   - text with a unified diff's hunks is a diff (also a text field of an object);
//   - line-structured text (headings, lists, code fences) is a document; prose is not.
//
// Nothing is guessed about meaning: no column is taken for money or a date, and every
// number is printed as the result wrote it.
func infer(root any) *View {
	switch t := root.(type) {
	case []any:
		return inferTable(t)
	case *object:
		var tables, texts []any
		flat := len(t.keys) > 0
		for _, k := range t.keys {
			switch f := t.vals[k].(type) {
			case []any:
				flat = false
				if agreeing(f) != nil {
					tables = append(tables, f)
				}
			case *object:
				flat = false
			case string:
				if HasHunks(f) {
					texts = append(texts, f)
				}
			}
		}
		if len(tables) == 1 {
			return inferTable(tables[0].([]any))
		}
		if len(tables) == 0 && len(texts) == 1 {
			return &View{Renderer: Diff, Text: clip(texts[0].(string), MaxText)}
		}
		if flat && len(t.keys) >= 2 {
			v := &View{Renderer: KeyValue}
			if record(v, t) && figures(v) {
				return v
			}
		}
	case string:
		if HasHunks(t) {
			return &View{Renderer: Diff, Text: clip(t, MaxText), Truncated: len(t) > MaxText}
		}
		if structuredText(t) {
			return &View{Renderer: Document, Text: clip(t, MaxText), Truncated: len(t) > MaxText}
		}
	}
	return nil
}

func inferTable(rows []any) *View {
	cols := agreeing(rows)
	if cols == nil {
		return nil
	}
	v := &View{Renderer: Table}
	if !table(v, rows, cols) {
		return nil
	}
	return v
}

// agreeing returns the columns of rows when they are objects that mostly agree on their
// keys: the keys more than half the rows have, in the order first met, with every row
// holding at least half of them. nil when they do not.
func agreeing(rows []any) []string {
	if len(rows) == 0 {
		return nil
	}
	count := map[string]int{}
	var order []string
	for _, r := range rows {
		o, ok := r.(*object)
		if !ok || len(o.keys) == 0 {
			return nil
		}
		for _, k := range o.keys {
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
	}
	var cols []string
	for _, k := range order {
		if count[k]*2 > len(rows) {
			cols = append(cols, k)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	for _, r := range rows {
		o := r.(*object)
		has := 0
		for _, c := range cols {
			if _, ok := o.vals[c]; ok {
				has++
			}
		}
		if has*2 < len(cols) {
			return nil
		}
	}
	return cols
}
