package logfile

import (
	"context"
	"io"
	"log/slog"
)

// Tee returns a handler that passes each record to terminal and writes it, as one JSON line,
// to w as well, at the levels terminal takes (the file records what the terminal shows).
// Wrap the result in the redaction, never the parts: both get the same scrubbed record.
func Tee(terminal slog.Handler, w io.Writer) slog.Handler {
	file := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.Level(-1 << 10)})
	return slog.NewMultiHandler(terminal, sameLevel{Handler: file, like: terminal})
}

// sameLevel is a handler enabled exactly where like is.
type sameLevel struct {
	slog.Handler
	like slog.Handler
}

func (h sameLevel) Enabled(ctx context.Context, l slog.Level) bool { return h.like.Enabled(ctx, l) }

func (h sameLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return sameLevel{Handler: h.Handler.WithAttrs(attrs), like: h.like}
}

func (h sameLevel) WithGroup(name string) slog.Handler {
	return sameLevel{Handler: h.Handler.WithGroup(name), like: h.like}
}
