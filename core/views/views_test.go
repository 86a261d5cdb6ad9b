package views

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"buddi/core/redact"
	"buddi/plugins"
)

func TestCheckNamesTheField(t *testing.T) {
	tools := []string{"demo.list", "demo.read"}
	cases := []struct {
		name  string
		d     plugins.ViewDescriptor
		field string
	}{
		{"no tool", plugins.ViewDescriptor{Renderer: "table"}, "Tool"},
		{"another plugin's tool", plugins.ViewDescriptor{Tool: "other.list", Renderer: "table"}, "Tool"},
		{"a tool it does not have", plugins.ViewDescriptor{Tool: "demo.nothing", Renderer: "table"}, "Tool"},
		{"unknown renderer", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "spreadsheet"}, "Renderer"},
		{"slot of another renderer", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table", Paths: map[string]string{"text": "body"}}, "Paths[text]"},
		{"an expression", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table", Paths: map[string]string{"rows": "items[?(@.total>3)]"}}, "Paths[rows]"},
		{"arithmetic", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "keyvalue", Paths: map[string]string{"record": "a+b"}}, "Paths[record]"},
		{"negative index", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table", Paths: map[string]string{"rows": "items[-1]"}}, "Paths[rows]"},
		{"double dot", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table", Paths: map[string]string{"rows": "a..b"}}, "Paths[rows]"},
		{"unclosed bracket", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table", Paths: map[string]string{"rows": "a[1"}}, "Paths[rows]"},
		{"unknown option", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "document", Options: map[string]any{"font": "serif"}}, "Options[font]"},
		{"columns not a list", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table", Options: map[string]any{"columns": "a,b"}}, "Options[columns]"},
		{"a column that is not a path", plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table", Options: map[string]any{"columns": []string{"name", "a b"}}}, "Options[columns]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check("demo", tools, c.d)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Check = %v, want a FieldError", err)
			}
			if fe.Field != c.field || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("field %q (%v), want %q", fe.Field, err, c.field)
			}
		})
	}
	good := []plugins.ViewDescriptor{
		{Tool: "demo.list", Renderer: "table", Paths: map[string]string{"rows": "page.items[0].rows", "title": "query"}, Options: map[string]any{"columns": []any{"name", "size.bytes"}}},
		{Tool: "demo.read", Renderer: "markdown"},
		{Tool: "demo.read", Renderer: "link preview", Paths: map[string]string{"url": "link"}},
		{Tool: "demo.list", Renderer: "list", Paths: map[string]string{"rows": ""}},
		{Tool: "demo.list", Renderer: "card"},
		{Tool: "demo.list", Renderer: "code"},
	}
	for _, d := range good {
		if err := Check("demo", tools, d); err != nil {
			t.Errorf("Check(%+v) = %v", d, err)
		}
	}
}

func TestCanonicalMapsTheIssuesNames(t *testing.T) {
	want := map[string]string{"table": Table, "list": Table, "card": KeyValue, "key-value": KeyValue, "image": Image,
		"diff": Diff, "code": Terminal, "markdown": Document, "link preview": Preview}
	for name, r := range want {
		if got, ok := Canonical(name); !ok || got != r {
			t.Errorf("Canonical(%q) = %q, %v; want %q", name, got, ok, r)
		}
	}
	if _, ok := Canonical("chart3d"); ok {
		t.Error("an unknown renderer is canonical")
	}
}

const rowsJSON = `[{"name":"a.go","size":1200},{"name":"b.go","size":30.50},{"name":"c.go","size":7}]`

func TestPrecedence(t *testing.T) {
	shown := func(renderer string, data string, paths map[string]string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"canvas": Shown{Renderer: renderer, Data: json.RawMessage(data), Paths: paths, Title: "Shown"}})
		return b
	}
	desc := &plugins.ViewDescriptor{Tool: "demo.list", Renderer: "keyvalue", Paths: map[string]string{"record": "[0]"}}
	cases := []struct {
		name     string
		in       Input
		renderer string
		source   string
	}{
		{"inference alone: rows are a table", Input{Result: Result{Tool: "demo.list", Data: json.RawMessage(rowsJSON)}}, Table, FromInferred},
		{"the descriptor beats inference", Input{Result: Result{Tool: "demo.list", Data: json.RawMessage(rowsJSON)}, Descriptor: desc}, KeyValue, FromDescriptor},
		{"canvas.show beats a descriptor", Input{Result: Result{Tool: ShowTool, Data: shown("bars", rowsJSON, map[string]string{"label": "name", "value": "size"})},
			Descriptor: &plugins.ViewDescriptor{Tool: ShowTool, Renderer: "document"}}, Bars, FromExplicit},
		{"canvas.show beats inference", Input{Result: Result{Tool: ShowTool, Data: shown("keyvalue", `{"state":"open"}`, nil)}}, KeyValue, FromExplicit},
		{"an unknown renderer received is structured", Input{Result: Result{Tool: ShowTool, Data: shown("hologram", rowsJSON, nil)}}, Structured, FromExplicit},
		{"a pending call is its envelope", Input{Result: Result{Tool: ShowTool, Data: shown("table", rowsJSON, nil)}, Descriptor: desc,
			Pending: &plugins.Envelope{Summary: "Send it", Preview: "To: the owner"}}, Envelope, FromPending},
		{"a failure always earns a tab", Input{Result: Result{Tool: "demo.list", IsError: true, Content: "disk full"}, Descriptor: desc}, Document, FromFailure},
		{"a descriptor without data draws nothing, inference is not asked", Input{Result: Result{Tool: "demo.list", Data: json.RawMessage(rowsJSON)},
			Descriptor: &plugins.ViewDescriptor{Tool: "demo.list", Renderer: "diff"}}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Resolve(c.in)
			if c.renderer == "" {
				if v != nil {
					t.Fatalf("view %+v, want none", v)
				}
				return
			}
			if v == nil || v.Renderer != c.renderer || v.Source != c.source {
				t.Fatalf("view %+v, want %s from %s", v, c.renderer, c.source)
			}
		})
	}
	v := Resolve(Input{Result: Result{Tool: ShowTool, Data: shown("bars", rowsJSON, map[string]string{"label": "name", "value": "size"})}})
	if len(v.Points) != 3 || v.Points[1] != (Point{"b.go", "30.50"}) || v.Title != "Shown" {
		t.Fatalf("bars %+v", v)
	}
}

func TestInferenceShapes(t *testing.T) {
	diff := "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-old\n+new\n same\n"
	doc := "# Notes\n\nFirst line.\n- one\n- two\n- three\nMore text here.\nAnd more.\nThe end.\n"
	prose := strings.Repeat("This is a long sentence of prose that goes on and on without any structure at all. ", 40)
	cases := []struct {
		name, data, content string
		renderer            string
	}{
		{"rows that agree", rowsJSON, "", Table},
		{"rows mostly agreeing", `[{"a":1,"b":2},{"a":3,"b":4},{"a":5,"c":6}]`, "", Table},
		{"object with one table", `{"query":"x","results":[{"t":"one","u":"http://a"},{"t":"two","u":"http://b"}],"n":2}`, "", Table},
		{"record with a figure", `{"name":"build","passed":41,"failed":2}`, "", KeyValue},
		{"diff text", "", diff, Diff},
		{"diff field", `{"path":"x.go","diff":` + quote(diff) + `}`, "", Diff},
		{"structured text", "", doc, Document},
		{"JSON in the model's text", "", rowsJSON, Table},
		// Not tables, not anything.
		{"rows that disagree", `[{"a":1},{"b":2},{"c":3}]`, "", ""},
		{"a list of scalars", `[1,2,3]`, "", ""},
		{"mixed array", `[{"a":1},2,"x"]`, "", ""},
		{"empty array", `[]`, "", ""},
		{"empty object", `{}`, "", ""},
		{"a receipt", `{"id":"m-1","status":"sent"}`, "", ""},
		{"a receipt with numbers that are ids and versions", `{"id":42,"note_id":7,"draftId":3,"version":2,"revision":5,"status":"kept"}`, "", ""},
		{"a record with a figure beside its id", `{"id":42,"status":"done","passed":41}`, "", KeyValue},
		{"nested object", `{"a":{"b":1},"c":{"d":2}}`, "", ""},
		{"a wall of prose", "", prose, ""},
		{"a short line", "", "Done.", ""},
		{"two tables: which one is not guessed", `{"x":[{"a":1}],"y":[{"b":2}]}`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Resolve(Input{Result: Result{Tool: "any.tool", Data: json.RawMessage(c.data), Content: c.content}})
			got := ""
			if v != nil {
				got = v.Renderer
			}
			if got != c.renderer {
				t.Fatalf("renderer %q (%+v), want %q", got, v, c.renderer)
			}
		})
	}
	v := Resolve(Input{Result: Result{Tool: "any.tool", Data: json.RawMessage(rowsJSON)}})
	if strings.Join(v.Columns, ",") != "name,size" || v.Rows[0][1] != "1200" || v.Rows[1][1] != "30.50" {
		t.Fatalf("numbers must print as written: %+v", v)
	}
	v = Resolve(Input{Result: Result{Tool: "any.tool", Data: json.RawMessage(`{"total":1200.00,"currency":"EUR"}`)}})
	if v.Pairs[0].Value != "1200.00" || !v.Pairs[0].Number {
		t.Fatalf("a figure is printed as written, never as money: %+v", v.Pairs)
	}
}

func TestDescriptorPaths(t *testing.T) {
	d := &plugins.ViewDescriptor{Tool: "demo.list", Renderer: "table",
		Paths: map[string]string{"rows": "page.items", "title": "page.name"}, Options: map[string]any{"columns": []string{"n", "meta.size"}}}
	data := `{"page":{"name":"Files","items":[{"n":"a","meta":{"size":3},"x":1},{"n":"b","meta":{"size":4}}]}}`
	v := Resolve(Input{Result: Result{Tool: "demo.list", Data: json.RawMessage(data)}, Descriptor: d})
	if v == nil || v.Title != "Files" || strings.Join(v.Columns, ",") != "n,meta.size" || v.Rows[1][1] != "4" {
		t.Fatalf("view %+v", v)
	}
	// A document falls back on the model's text when the output holds none.
	doc := &plugins.ViewDescriptor{Tool: "demo.read", Renderer: "document"}
	v = Resolve(Input{Result: Result{Tool: "demo.read", Data: json.RawMessage(`{"path":"/x","from":1}`), Content: "line one\nline two"}, Descriptor: doc})
	if v == nil || v.Text != "line one\nline two" {
		t.Fatalf("document %+v", v)
	}
	// A keyvalue receipt earns no tab even with a descriptor; an empty table none either.
	kv := &plugins.ViewDescriptor{Tool: "demo.read", Renderer: "keyvalue"}
	if v := Resolve(Input{Result: Result{Tool: "demo.read", Data: json.RawMessage(`{"ok":true,"id":"x"}`)}, Descriptor: kv}); v != nil {
		t.Fatalf("a receipt drew %+v", v)
	}
	if v := Resolve(Input{Result: Result{Tool: "demo.read", Data: json.RawMessage(`{"title":"Kept","id":12,"version":3,"scope":"private"}`)}, Descriptor: kv}); v != nil {
		t.Fatalf("a receipt of ids and a version drew %+v", v)
	}
	if v := Resolve(Input{Result: Result{Tool: ShowTool, Data: json.RawMessage(`{"canvas":{"renderer":"keyvalue","data":{"id":12,"version":3}}}`)}}); v == nil {
		t.Fatal("canvas.show of a receipt drew nothing: what the agent shows is drawn")
	}
	if v := Resolve(Input{Result: Result{Tool: "demo.list", Data: json.RawMessage(`{"page":{"items":[]}}`)}, Descriptor: d}); v != nil {
		t.Fatalf("an empty table drew %+v", v)
	}
	// A descriptor whose columns are in none of the rows draws nothing, not a table of blanks.
	if v := Resolve(Input{Result: Result{Tool: "demo.list", Data: json.RawMessage(`{"page":{"items":[{"a":1},{"b":2}]}}`)}, Descriptor: d}); v != nil {
		t.Fatalf("a table of blanks drew %+v", v)
	}
}

func TestTextDegrades(t *testing.T) {
	v := Resolve(Input{Result: Result{Tool: "any.tool", Data: json.RawMessage(rowsJSON)}})
	got := Text(v, true)
	want := "```\nname  size\na.go  1200\nb.go  30.50\nc.go  7\n```"
	if got != want {
		t.Fatalf("table as text:\n%s\nwant\n%s", got, want)
	}
	if got := Text(v, false); got != "  name  size\n  a.go  1200\n  b.go  30.50\n  c.go  7" {
		t.Fatalf("table for the terminal:\n%q", got)
	}
	diff := "@@ -1 +1 @@\n-old\n+new"
	got = Text(Resolve(Input{Result: Result{Tool: "any.tool", Content: diff}}), true)
	if got != "```diff\n@@ -1 +1 @@\n-old\n+new\n```" {
		t.Fatalf("diff as text:\n%s", got)
	}
	var rows []map[string]any
	for i := range 40 {
		rows = append(rows, map[string]any{"n": i})
	}
	b, _ := json.Marshal(rows)
	got = Text(Resolve(Input{Result: Result{Tool: "any.tool", Data: b}}), true)
	if !strings.HasSuffix(got, "(25 more rows not shown)") || strings.Count(got, "\n") != 18 {
		t.Fatalf("a long table is cut:\n%s", got)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestScrubTakesSecretsOut(t *testing.T) {
	const secret = "hunter2-very-secret-token"
	r := redact.New(map[string]string{"API_KEY": secret})
	data := `[{"name":"prod","token":"` + secret + `"},{"name":"dev","token":"none"}]`
	v := Resolve(Input{Result: Result{Tool: "any.tool", Data: json.RawMessage(data)}})
	if v == nil || v.Rows[0][1] != secret {
		t.Fatalf("the view carries the cell before it leaves: %+v", v)
	}
	out := Scrub(v, r)
	if strings.Contains(string(out), secret) || !strings.Contains(string(out), redact.Token("API_KEY")) || !json.Valid(out) {
		t.Fatalf("scrubbed view %s", out)
	}
}
