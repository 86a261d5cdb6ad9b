package logfile

import (
	"context"
	"log/slog"
)

// Demote wraps the handler of a library that says at info what an owner need not read (the
// queue's job counts every few seconds, a migration tool's "no migrations to run"): its info
// lines are written at debug. Warnings and errors pass as they are.
func Demote(next slog.Handler) slog.Handler { return demoted{next} }

type demoted struct{ next slog.Handler }

func (h demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, demote(l))
}

func (h demoted) Handle(ctx context.Context, rec slog.Record) error {
	if l := demote(rec.Level); l != rec.Level {
		rec = rec.Clone()
		rec.Level = l
	}
	return h.next.Handle(ctx, rec)
}

func (h demoted) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoted{h.next.WithAttrs(attrs)}
}

func (h demoted) WithGroup(name string) slog.Handler { return demoted{h.next.WithGroup(name)} }

// demote maps info (and what lies between info and warn) to debug.
func demote(l slog.Level) slog.Level {
	if l >= slog.LevelInfo && l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}
