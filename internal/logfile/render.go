package logfile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Renderer writes the file's JSON lines as the terminal shows them (slog's text form), in
// the owner's time zone. A line that is not a JSON object is written as it is.
type Renderer struct {
	w    io.Writer
	text slog.Handler
	loc  *time.Location
}

// NewRenderer renders to w, with times in loc (nil: the machine's zone).
func NewRenderer(w io.Writer, loc *time.Location) *Renderer {
	if loc == nil {
		loc = time.Local
	}
	return &Renderer{w: w, loc: loc, text: slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.Level(-1 << 10)})}
}

// Line renders one line of the file.
func (r *Renderer) Line(line []byte) error {
	rec, ok := record(line, r.loc)
	if !ok {
		_, err := fmt.Fprintf(r.w, "%s\n", line)
		return err
	}
	return r.text.Handle(context.Background(), rec)
}

// record reads a JSON line back into a slog record, its attributes in their order and its
// time in loc.
func record(line []byte, loc *time.Location) (slog.Record, bool) {
	attrs, err := object(line)
	if err != nil {
		return slog.Record{}, false
	}
	var (
		at   time.Time
		lvl  slog.Level
		msg  string
		rest []slog.Attr
	)
	for _, a := range attrs {
		switch {
		case a.Key == slog.TimeKey && a.Value.Kind() == slog.KindString:
			t, err := time.Parse(time.RFC3339Nano, a.Value.String())
			if err != nil {
				rest = append(rest, a)
				continue
			}
			at = t.In(loc)
		case a.Key == slog.LevelKey && a.Value.Kind() == slog.KindString:
			if lvl.UnmarshalText([]byte(a.Value.String())) != nil {
				rest = append(rest, a)
			}
		case a.Key == slog.MessageKey && a.Value.Kind() == slog.KindString:
			msg = a.Value.String()
		default:
			rest = append(rest, a)
		}
	}
	rec := slog.NewRecord(at, lvl, msg, 0)
	rec.AddAttrs(rest...)
	return rec, true
}

// object reads a JSON object's members in order.
func object(doc []byte) ([]slog.Attr, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var attrs []slog.Attr
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		v, err := value(raw)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, slog.Attr{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return attrs, nil
}

func value(raw json.RawMessage) (slog.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return slog.Value{}, fmt.Errorf("empty value")
	}
	switch raw[0] {
	case '{':
		attrs, err := object(raw)
		if err != nil {
			return slog.Value{}, err
		}
		return slog.GroupValue(attrs...), nil
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return slog.StringValue(s), err
	case 't', 'f':
		var b bool
		err := json.Unmarshal(raw, &b)
		return slog.BoolValue(b), err
	case 'n':
		return slog.AnyValue(nil), nil
	case '[':
		return slog.StringValue(string(raw)), nil
	default:
		n := json.Number(raw)
		if i, err := n.Int64(); err == nil {
			return slog.Int64Value(i), nil
		}
		f, err := n.Float64()
		return slog.Float64Value(f), err
	}
}
