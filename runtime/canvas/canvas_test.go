package canvas

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"buddi/core/conversation"
	"buddi/core/registry"
	"buddi/core/views"
	"buddi/internal/pgtest"
	"buddi/plugins"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// canvas.show draws given data with the renderer asked for, and an earlier result of the
// conversation again: the view is explicit, above that tool's own descriptor.
func TestShow(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reg, err := registry.New(Manifest(pool))
	if err != nil {
		t.Fatal(err)
	}
	var conv string
	if err := pool.QueryRow(ctx, `INSERT INTO core.conversations (agent, surface) VALUES ('dev', 'dashboard') RETURNING id`).Scan(&conv); err != nil {
		t.Fatal(err)
	}
	if _, err := conversation.Append(ctx, pool, conv, "", conversation.KindTool, map[string]any{
		"call_id": "call-1", "tool": "demo.list", "content": "three files",
		"data": json.RawMessage(`{"files":[{"name":"a","lines":10},{"name":"b","lines":20},{"name":"c","lines":5}]}`),
	}); err != nil {
		t.Fatal(err)
	}
	show := func(surface string, a map[string]any) plugins.Result {
		t.Helper()
		b, _ := json.Marshal(a)
		call := plugins.Call{Tool: views.ShowTool, Args: b, Agent: "dev", ConversationID: conv, RunID: "", CallID: "c", Surface: surface}
		tool, _ := reg.Lookup(views.ShowTool)
		if _, err := tool.Describe(ctx, call); err != nil {
			t.Fatalf("describe: %v", err)
		}
		res, err := tool.Execute(ctx, call, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := show("dashboard", map[string]any{"renderer": "bars", "title": "Lines", "call_id": "call-1", "paths": map[string]string{"items": "files", "label": "name", "value": "lines"}})
	v := views.Resolve(views.Input{Result: views.Result{Tool: views.ShowTool, Data: res.Data, Content: res.Text},
		Descriptor: &plugins.ViewDescriptor{Tool: views.ShowTool, Renderer: "document"}})
	if res.IsError || v == nil || v.Renderer != views.Bars || v.Source != views.FromExplicit || v.Of != "call-1" || len(v.Points) != 3 || v.Title != "Lines" {
		t.Fatalf("result %+v view %+v", res, v)
	}
	res = show("telegram", map[string]any{"renderer": "list", "title": "Names", "data": []string{"x", "y"}})
	if res.IsError || !strings.Contains(res.Text, "no canvas") {
		t.Fatalf("on telegram: %+v", res)
	}
	res = show("dashboard", map[string]any{"renderer": "table", "title": "Nothing", "data": []any{}})
	if !res.IsError || !strings.Contains(res.Text, "Nothing to draw") {
		t.Fatalf("empty: %+v", res)
	}
	res = show("dashboard", map[string]any{"renderer": "table", "title": "Gone", "call_id": "call-9"})
	if !res.IsError || !strings.Contains(res.Text, "call-9") {
		t.Fatalf("unknown call: %+v", res)
	}
	// Columns that are in none of the rows draw nothing: the agent is told, not shown blanks.
	res = show("dashboard", map[string]any{"renderer": "table", "title": "Blank", "data": []map[string]any{{"name": "a"}}, "columns": []string{"nmae", "size"}})
	if !res.IsError || !strings.Contains(res.Text, `"nmae"`) {
		t.Fatalf("columns in no row: %+v", res)
	}
	res = show("dashboard", map[string]any{"renderer": "table", "title": "Half", "data": []map[string]any{{"name": "a"}}, "columns": []string{"name", "size"}})
	if res.IsError {
		t.Fatalf("one column in the rows: %+v", res)
	}
	tool, _ := reg.Lookup(views.ShowTool)
	bad, _ := json.Marshal(map[string]any{"renderer": "table", "title": "x", "data": []int{1}, "paths": map[string]string{"rows": "a[?x]"}})
	if _, err := tool.Describe(ctx, plugins.Call{Tool: views.ShowTool, Args: bad}); err == nil {
		t.Fatal("an expression as a path was described")
	}
}
