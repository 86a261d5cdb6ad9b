package redact

import (
	"encoding/json"
	"testing"
)

func TestStorable(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\x00b", "a\ufffdb"},
		{"\x00\x00", "\ufffd\ufffd"},
		{"bad \xff byte", "bad \ufffd byte"},
		{"é and 🔑", "é and 🔑"},
	}
	for _, tt := range tests {
		if got := Storable(tt.in); got != tt.want {
			t.Errorf("Storable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStorableJSON(t *testing.T) {
	t.Parallel()
	doc, err := json.Marshal(map[string]any{"text": "ELF\x00\x01 and \\u0000 typed", "n": []string{"\x00"}})
	if err != nil {
		t.Fatal(err)
	}
	got := StorableJSON(doc)
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("not JSON any more: %s", got)
	}
	if back["text"] != "ELF\ufffd\x01 and \\u0000 typed" || back["n"].([]any)[0] != "\ufffd" {
		t.Fatalf("got %s", got)
	}
	clean := []byte(`{"a":"\\u0000 is text here"}`)
	if got := StorableJSON(clean); &got[0] != &clean[0] || string(got) != string(clean) {
		t.Errorf("a document with no NUL changed: %s", got)
	}
}
