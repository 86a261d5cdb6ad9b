package logfile

import (
	"context"
	"io"
	"log/slog"
	"regexp"
)

// Tee returns a handler that passes each record to terminal and writes it, as one JSON line,
// to w as well, at the levels terminal takes (the file records what the terminal shows).
// Wrap the result in the redaction, never the parts: both get the same scrubbed record.
//
// A sign-in link's ticket is shown on the terminal (it is how the owner signs in) and never
// kept in the file: a file outlives the ticket's minutes, is rotated, copied and pasted.
func Tee(terminal slog.Handler, w io.Writer) slog.Handler {
	file := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.Level(-1 << 10), ReplaceAttr: dropTickets})
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

// ticketParam is a sign-in ticket in a URL's query.
var ticketParam = regexp.MustCompile(`([?&]ticket=)[^\s&#"'<>;]+`)

// dropTickets keeps sign-in tickets out of the file: a ticket in any string becomes "‹not kept›".
func dropTickets(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindString {
		if v := a.Value.String(); ticketParam.MatchString(v) {
			return slog.String(a.Key, ticketParam.ReplaceAllString(v, "${1}‹not kept›"))
		}
	}
	return a
}
