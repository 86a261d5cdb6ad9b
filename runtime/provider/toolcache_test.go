package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// TestToolCacheEncodesOnceAndKeepsNoError: a tool is encoded once per wire name,
// description and schema; a failed encoding is not kept; past its bound it starts again.
func TestToolCacheEncodesOnceAndKeepsNoError(t *testing.T) {
	var c ToolCache
	calls := 0
	enc := func() (json.RawMessage, error) { calls++; return json.RawMessage(fmt.Sprintf(`{"n":%d}`, calls)), nil }
	tool := Tool{Name: "a.b", Description: "d", Schema: json.RawMessage(`{"type":"object"}`)}
	for range 3 {
		if b, err := c.Encoded("a__b", tool, enc); err != nil || string(b) != `{"n":1}` {
			t.Fatalf("Encoded = %s, %v; want the first encoding", b, err)
		}
	}
	changed := tool
	changed.Description = "other"
	if b, _ := c.Encoded("a__b", changed, enc); string(b) != `{"n":2}` {
		t.Fatalf("a changed description gave %s, want a new encoding", b)
	}
	if b, _ := c.Encoded("a_b", tool, enc); string(b) != `{"n":3}` {
		t.Fatalf("another wire name gave %s, want a new encoding", b)
	}
	bad := errors.New("bad schema")
	failing := Tool{Name: "x", Schema: json.RawMessage(`[1]`)}
	for range 2 {
		if _, err := c.Encoded("x", failing, func() (json.RawMessage, error) { return nil, bad }); !errors.Is(err, bad) {
			t.Fatalf("err = %v, want the encoder's every time", err)
		}
	}
	for i := range toolCacheSize + 1 {
		_, _ = c.Encoded(fmt.Sprint(i), tool, enc)
	}
	if n := len(c.m); n > toolCacheSize {
		t.Fatalf("the cache holds %d, more than its bound %d", n, toolCacheSize)
	}
}
