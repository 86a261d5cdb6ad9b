package action_test

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"buddi/core/action"
	"buddi/plugins"
)

// reversed encodes v with every object's keys in reverse order and spaces around the
// punctuation: the same arguments, spelled another way.
func reversed(v any, buf *bytes.Buffer) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" , ")
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(" : ")
			reversed(x[k], buf)
		}
		buf.WriteString(" }")
	case []any:
		buf.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				buf.WriteString(" , ")
			}
			reversed(e, buf)
		}
		buf.WriteString(" ]")
	default:
		b, _ := json.Marshal(x)
		buf.Write(b)
	}
}

// FuzzHashKeyOrder: the same arguments in any key order give the same action hash, and
// different arguments give a different one.
func FuzzHashKeyOrder(f *testing.F) {
	f.Add([]byte(`{"to":["a@x","b@x"],"subject":"hi","body":{"text":"t","html":"<p>"}}`))
	f.Add([]byte(`{"command":"go test ./...","cwd":"/w","env":{"B":"2","A":"1"}}`))
	env := plugins.Envelope{Summary: "s", Preview: "p"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v map[string]any
		if dec.Decode(&v) != nil || dec.More() {
			return
		}
		a := action.Action{ID: "00000000-0000-4000-8000-000000000001", Tool: "t.x", ToolVersion: "1", Envelope: env}
		a.Args = raw
		want, err := action.Hash(key, a)
		if err != nil {
			return // duplicate keys and the like are refused, not hashed
		}
		var buf bytes.Buffer
		reversed(v, &buf)
		a.Args = append([]byte(nil), buf.Bytes()...)
		got, err := action.Hash(key, a)
		if err != nil || got != want {
			t.Fatalf("%s and %s hash differently (%v)", raw, buf.Bytes(), err)
		}
		v["\x00extra"] = true
		buf.Reset()
		reversed(v, &buf)
		a.Args = append([]byte(nil), buf.Bytes()...)
		if other, _ := action.Hash(key, a); other == want {
			t.Fatalf("an added argument kept the hash of %s", raw)
		}
	})
}
