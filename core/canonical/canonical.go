// Package canonical gives JSON one spelling, so equal arguments hash equally whatever the key
// order or spacing a model chose: object keys sorted, no insignificant whitespace, numbers as
// written. Duplicate keys are refused rather than resolved, because two readers could resolve
// them differently.
package canonical

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// MaxDepth bounds nesting, so a hostile document cannot exhaust the stack.
const MaxDepth = 64

// JSON returns the canonical form of one JSON value.
func JSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := value(dec, &buf, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("canonical: more than one JSON value")
	}
	return buf.Bytes(), nil
}

func value(dec *json.Decoder, buf *bytes.Buffer, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("canonical: nested deeper than %d", MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("canonical: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return object(dec, buf, depth)
		case '[':
			return array(dec, buf, depth)
		}
		return fmt.Errorf("canonical: unexpected %q", t)
	case string:
		return writeString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	}
	return nil
}

func object(dec *json.Decoder, buf *bytes.Buffer, depth int) error {
	members := map[string][]byte{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("canonical: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("canonical: object key is not a string")
		}
		if _, dup := members[key]; dup {
			return fmt.Errorf("canonical: duplicate key %q", key)
		}
		var v bytes.Buffer
		if err := value(dec, &v, depth+1); err != nil {
			return err
		}
		members[key] = v.Bytes()
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("canonical: %w", err)
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := writeString(buf, k); err != nil {
			return err
		}
		buf.WriteByte(':')
		buf.Write(members[k])
	}
	buf.WriteByte('}')
	return nil
}

func array(dec *json.Decoder, buf *bytes.Buffer, depth int) error {
	buf.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := value(dec, buf, depth+1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return fmt.Errorf("canonical: %w", err)
	}
	buf.WriteByte(']')
	return nil
}

// writeString writes s quoted as encoding/json does (invalid UTF-8 was already replaced by
// U+FFFD when it was decoded, so the canonical text is what a tool will read).
func writeString(buf *bytes.Buffer, s string) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("canonical: %w", err)
	}
	buf.Write(b)
	return nil
}

// Marshal encodes v and returns its canonical form.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical: %w", err)
	}
	return JSON(raw)
}
