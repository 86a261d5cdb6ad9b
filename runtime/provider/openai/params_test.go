package openai

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"buddi/runtime/provider"
)

// TestToolsOnTheWire: the tools a request offers are encoded as the Chat Completions wire
// takes them, the same on every call (the second from the cache), with a changed
// description or schema sent as changed, and a bad schema refused every time.
func TestToolsOnTheWire(t *testing.T) {
	p := &Provider{}
	tools := func(desc, schema string) []any {
		t.Helper()
		req := provider.Request{Model: "model-one", Tools: []provider.Tool{{Name: "files.read", Description: desc, Schema: json.RawMessage(schema)}},
			Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{provider.Text{Text: "hello"}}}}}
		names, _ := provider.NewToolNames()
		params, err := p.params(req, names)
		if err != nil {
			t.Fatal(err)
		}
		b, err := params.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Tools []any `json:"tools"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return body.Tools
	}
	want := func(desc, schema string) []any {
		var w []any
		fn := `{"name":"files__read","parameters":` + schema + `}`
		if desc != "" {
			fn = `{"name":"files__read","description":"` + desc + `","parameters":` + schema + `}`
		}
		if err := json.Unmarshal([]byte(`[{"type":"function","function":`+fn+`}]`), &w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	schema := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	for i := range 2 {
		if got := tools("Read a file.", schema); !reflect.DeepEqual(got, want("Read a file.", schema)) {
			t.Fatalf("call %d: tools %v, want %v", i, got, want("Read a file.", schema))
		}
	}
	if got := tools("Read a file, whole.", schema); !reflect.DeepEqual(got, want("Read a file, whole.", schema)) {
		t.Fatalf("a changed description: tools %v", got)
	}
	other := `{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}}}`
	if got := tools("Read a file.", other); !reflect.DeepEqual(got, want("Read a file.", other)) {
		t.Fatalf("a changed schema: tools %v", got)
	}
	if got := tools("", ""); !reflect.DeepEqual(got, want("", `{"type":"object","properties":{}}`)) {
		t.Fatalf("no description and no schema: tools %v", got)
	}
	for range 2 {
		req := provider.Request{Model: "model-one", Tools: []provider.Tool{{Name: "files.read", Schema: json.RawMessage(`[1]`)}},
			Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{provider.Text{Text: "hello"}}}}}
		names, _ := provider.NewToolNames()
		if _, err := p.params(req, names); err == nil || !strings.Contains(err.Error(), "files.read") {
			t.Fatalf("an array schema: err %v, want the tool named", err)
		}
	}
}

// BenchmarkParams measures the request a model call sends, built and encoded, for an
// agent offered 30 tools.
func BenchmarkParams(b *testing.B) {
	p := &Provider{}
	var tools []provider.Tool
	for i := range 30 {
		tools = append(tools, provider.Tool{
			Name:        fmt.Sprintf("plugin.tool_%d", i),
			Description: strings.Repeat("What the tool does and when to use it. ", 6),
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"a path inside the workspace"},` +
				`"mode":{"type":"string","enum":["read","write","append"],"description":"how"},` +
				`"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"at most this many"},` +
				`"tags":{"type":"array","items":{"type":"string"},"description":"labels"}},` +
				`"required":["path"],"additionalProperties":false}`),
		})
	}
	req := provider.Request{Model: "model-one", System: "You are a helpful agent.", Tools: tools,
		Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{provider.Text{Text: "hello"}}}}}
	b.ReportAllocs()
	for b.Loop() {
		names, _ := provider.NewToolNames()
		params, err := p.params(req, names)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := params.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
