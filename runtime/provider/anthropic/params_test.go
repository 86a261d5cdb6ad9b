package anthropic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"buddi/runtime/provider"
)

// TestInputSchemaOnTheWire: a tool's schema reaches the wire as the tool gave it (type
// object; properties, required and every other keyword kept), whatever its shape.
func TestInputSchemaOnTheWire(t *testing.T) {
	cases := []struct {
		name, schema, want string
	}{
		{"empty", ``, `{"type":"object"}`},
		{"bare object", `{"type":"object"}`, `{"type":"object"}`},
		{"no type", `{"properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"full", `{"type":"object","properties":{"path":{"type":"string","description":"where"},"n":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false,"$defs":{"x":{"type":"string"}}}`,
			`{"type":"object","properties":{"path":{"type":"string","description":"where"},"n":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false,"$defs":{"x":{"type":"string"}}}`},
		{"null properties", `{"type":"object","properties":null}`, `{"type":"object"}`},
		{"required with a stray number", `{"type":"object","properties":{"a":{}},"required":["a",3]}`, `{"type":"object","properties":{"a":{}},"required":["a"]}`},
		{"unicode and escapes", `{"type":"object","properties":{"é":{"description":"a \"quoted\" \u2028 line"}}}`, `{"type":"object","properties":{"é":{"description":"a \"quoted\" \u2028 line"}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := inputSchema(json.RawMessage(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("on the wire %s, want %s", b, c.want)
			}
		})
	}
	for _, bad := range []string{`{"type":"string"}`, `{"type":["object","null"]}`, `[1]`, `{"type":`, `{"properties":{"a":}}`} {
		if _, err := inputSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("schema %s was taken, want it refused", bad)
		}
	}
}

// benchTools is a tool list of the size an agent with the compiled-in plugins is offered.
func benchTools() []provider.Tool {
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
	return tools
}

// BenchmarkParams measures the request a model call sends, built and encoded: the
// tools' schemas are most of it for an agent with many tools.
func BenchmarkParams(b *testing.B) {
	p := &Provider{}
	req := provider.Request{Model: "model-one", System: "You are a helpful agent.", Tools: benchTools(),
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

// TestToolsOnTheWire: the tools a request offers are encoded as the Messages wire takes
// them, the same on every call (the second from the cache), with a changed description or
// schema sent as changed, and a bad schema refused every time.
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
		s := `[{"name":"files__read","input_schema":` + schema + `}]`
		if desc != "" {
			s = `[{"name":"files__read","description":"` + desc + `","input_schema":` + schema + `}]`
		}
		if err := json.Unmarshal([]byte(s), &w); err != nil {
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
	if got := tools("", schema); !reflect.DeepEqual(got, want("", schema)) {
		t.Fatalf("no description: tools %v", got)
	}
	for range 2 {
		req := provider.Request{Model: "model-one", Tools: []provider.Tool{{Name: "files.read", Schema: json.RawMessage(`{"type":"string"}`)}},
			Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{provider.Text{Text: "hello"}}}}}
		names, _ := provider.NewToolNames()
		if _, err := p.params(req, names); err == nil || !strings.Contains(err.Error(), "files.read") {
			t.Fatalf("a string schema: err %v, want the tool named", err)
		}
	}
}
