package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// object is a JSON object with its keys in the order the result wrote them, so a table's
// columns and a record's rows keep the tool's order.
type object struct {
	keys []string
	vals map[string]any
}

// get returns the value at key.
func (o *object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// parse reads a JSON document into strings, json.Numbers (the digits as written), bools,
// nil, []any and *object.
func parse(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("views: more than one JSON value")
	}
	return v, nil
}

// maxDepth bounds the nesting parse follows.
const maxDepth = 64

func parseValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("views: nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("views: unexpected %v", t)
	default:
		return t, nil
	}
}

// scalar reports whether v is a string, number, bool or null.
func scalar(v any) bool {
	switch v.(type) {
	case string, json.Number, bool, nil:
		return true
	}
	return false
}

// maxCell bounds a cell's text.
const maxCell = 300

// cell is v as the canvas prints it: a string as it is, a number as its digits were written
// (never reformatted), true or false, nothing for null, and anything nested as compact JSON.
func cell(v any) string {
	switch t := v.(type) {
	case string:
		return clip(t, maxCell)
	case json.Number:
		return string(t)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return ""
	}
	return clip(compact(v), maxCell)
}

// compact writes v back as compact JSON.
func compact(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	switch t := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeJSON(b, t.vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(string(t))
	default:
		vb, _ := json.Marshal(t)
		b.Write(vb)
	}
}

// clip cuts s to at most n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
