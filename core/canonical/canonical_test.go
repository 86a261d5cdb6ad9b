package canonical

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

func TestJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":[true,null,{"d":"x","c":2}]}`, `{"a":[true,null,{"c":2,"d":"x"}],"b":1}`},
		{" { \"a\" :\n 1.50 } ", `{"a":1.50}`},
		{`"<tag>"`, `"\u003ctag\u003e"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
	}
	for _, tt := range tests {
		got, err := JSON([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("JSON(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestJSONRefuses(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":1} {}`, `{"a":`, ``, `[1,]`, string(bytes.Repeat([]byte("["), MaxDepth+2))} {
		if got, err := JSON([]byte(in)); err == nil {
			t.Errorf("JSON(%q) = %s, want an error", in, got)
		}
	}
}

// shuffle re-encodes a decoded JSON value with every object's keys in a random order and
// random spacing.
func shuffle(r *rand.Rand, v any, buf *bytes.Buffer) {
	space := func() {
		if r.IntN(2) == 0 {
			buf.WriteString(" \n\t"[:r.IntN(3)+1])
		}
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			space()
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			space()
			buf.WriteByte(':')
			shuffle(r, x[k], buf)
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			shuffle(r, e, buf)
		}
		buf.WriteByte(']')
	default:
		b, _ := json.Marshal(x)
		space()
		buf.Write(b)
	}
}

// FuzzKeyOrder: the same arguments in any key order and spacing give the same canonical form,
// and the canonical form is a fixed point.
func FuzzKeyOrder(f *testing.F) {
	f.Add([]byte(`{"to":["a@x","b@x"],"subject":"hi","body":{"text":"t","html":"<p>"}}`), uint64(1))
	f.Add([]byte(`{"command":"go test ./...","cwd":"/w","env":{"B":"2","A":"1"}}`), uint64(7))
	f.Add([]byte(`[1,2,{"z":null,"y":false}]`), uint64(3))
	f.Fuzz(func(t *testing.T, raw []byte, seed uint64) {
		want, err := JSON(raw)
		if err != nil {
			return
		}
		again, err := JSON(want)
		if err != nil || !bytes.Equal(again, want) {
			t.Fatalf("canonical form is not a fixed point: %s -> %s (%v)", want, again, err)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(want))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("canonical form does not decode: %v", err)
		}
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		for range 3 {
			var buf bytes.Buffer
			shuffle(r, v, &buf)
			got, err := JSON(buf.Bytes())
			if err != nil {
				t.Fatalf("reordered %s: %v", buf.Bytes(), err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("reordered %s gives %s, want %s", buf.Bytes(), got, want)
			}
		}
	})
}
