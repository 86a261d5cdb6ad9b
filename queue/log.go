package queue

import (
	"context"
	"log/slog"
)

// quieter is the handler of River's own logger: River says at info what an owner need not
// read (its producers' job counts every few seconds, each maintenance pass, the client's
// start and stop), so its info lines are written at debug. Warnings and errors stay.
type quieter struct{ next slog.Handler }

func (h quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, demote(l))
}

func (h quieter) Handle(ctx context.Context, rec slog.Record) error {
	if l := demote(rec.Level); l != rec.Level {
		rec = rec.Clone()
		rec.Level = l
	}
	return h.next.Handle(ctx, rec)
}

func (h quieter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quieter{h.next.WithAttrs(attrs)}
}

func (h quieter) WithGroup(name string) slog.Handler { return quieter{h.next.WithGroup(name)} }

// demote maps info (and what lies between info and warn) to debug.
func demote(l slog.Level) slog.Level {
	if l >= slog.LevelInfo && l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}
