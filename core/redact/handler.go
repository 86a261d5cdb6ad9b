package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
)

// Scrubber is what redacts: a *Redactor, or a *Live that swaps in a new one when the vault
// changes.
type Scrubber interface {
	// Current returns the Redactor in use now (a caller that redacts several things at once
	// takes it once).
	Current() *Redactor
	// Stream returns a streaming redactor (for text that arrives in pieces) over Current.
	Stream() *Stream
	// String returns s with every secret replaced.
	String(s string) string
	// Bytes returns b with every secret replaced.
	Bytes(b []byte) []byte
	// JSON returns the JSON document doc with every secret replaced, still valid JSON.
	JSON(doc []byte) []byte
}

var (
	_ Scrubber     = (*Redactor)(nil)
	_ Scrubber     = (*Live)(nil)
	_ slog.Handler = (*Handler)(nil)
)

// Handler is a slog.Handler that scrubs a record's message and every attribute (keys,
// values, groups, values bound by WithAttrs) before passing it to the next handler. Attributes
// bound by WithAttrs are scrubbed once, when bound, by the redactor of that moment.
type Handler struct {
	next slog.Handler
	s    Scrubber
}

// NewHandler wraps next so that nothing reaches it unscrubbed.
func NewHandler(next slog.Handler, s Scrubber) *Handler {
	return &Handler{next: next, s: s}
}

// Enabled asks the next handler.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle scrubs the record and passes it on.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	r := h.s.Current() // one look at the vault per record
	out := slog.NewRecord(rec.Time, rec.Level, r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(r, a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs scrubs attrs and binds them on the next handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	r := h.s.Current()
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = attr(r, a)
	}
	return &Handler{next: h.next.WithAttrs(scrubbed), s: h.s}
}

// WithGroup opens a group (its name scrubbed) on the next handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(h.s.String(name)), s: h.s}
}

// attr scrubs one attribute with r. A value that held a secret becomes a string, except
// JSON-able values, which stay JSON; a value without one is passed on as it was.
func attr(r *Redactor, a slog.Attr) slog.Attr {
	a.Key = r.String(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		group := v.Group()
		scrubbed := make([]slog.Attr, len(group))
		for i, g := range group {
			scrubbed[i] = attr(r, g)
		}
		a.Value = slog.GroupValue(scrubbed...)
	case slog.KindAny:
		a.Value = anyValue(r, v)
	default: // strings, and numbers, times and durations whose text might be a secret
		s := v.String()
		if rs := r.String(s); rs != s {
			a.Value = slog.StringValue(rs)
		} else {
			a.Value = v
		}
	}
	return a
}

// anyValue scrubs a KindAny value with r as the next handler would print it.
func anyValue(r *Redactor, v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case json.RawMessage:
		return slog.AnyValue(json.RawMessage(r.JSON(x)))
	case []byte:
		return slog.AnyValue(r.Bytes(x))
	case error:
		s := x.Error()
		if rs := r.String(s); rs != s {
			return slog.StringValue(rs)
		}
		return v
	case nil:
		return v
	default:
		// As JSON first, so that a struct stays a structure in a JSON log; then as the text
		// handler prints it, which shows fields that JSON leaves out.
		if b, err := json.Marshal(x); err == nil {
			if rb := r.JSON(b); !bytes.Equal(rb, b) {
				return slog.AnyValue(json.RawMessage(rb))
			}
		}
		s := fmt.Sprintf("%+v", x)
		if rs := r.String(s); rs != s {
			return slog.StringValue(rs)
		}
		return v
	}
}
