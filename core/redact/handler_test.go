package redact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type credentials struct {
	User     string
	Password string
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

type lazy struct{ s string }

func (l lazy) LogValue() slog.Value { return slog.StringValue(l.s) }

func TestHandler(t *testing.T) {
	t.Parallel()
	key := testSecrets["API_KEY"]
	pass := testSecrets["MAIL_PASS"]
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		opts := &slog.HandlerOptions{Level: slog.LevelDebug}
		var next slog.Handler = slog.NewJSONHandler(&buf, opts)
		if format == "text" {
			next = slog.NewTextHandler(&buf, opts)
		}
		log := slog.New(NewHandler(next, New(testSecrets))).With("service", "test", "bound", "token "+key)
		log.Info("calling the provider with key "+key,
			"header", "Bearer "+key,
			"pin", 12345678,
			"err", fmt.Errorf("dial: %w", errors.New("auth "+pass+" refused")),
			"creds", credentials{User: "owner", Password: pass},
			"creds_ptr", &credentials{User: "owner", Password: key},
			"stringer", stringer{"s=" + key},
			"lazy", lazy{key},
			"raw", []byte("x"+key),
			"elapsed", time.Second,
			slog.Group("req", "url", "https://x/?k="+key, slog.Group("deep", "v", key)),
		)
		log.WithGroup("g"+key).Warn("in a group", "k", key)
		out := buf.String()
		for _, secret := range []string{key, pass, "12345678", `pä\"ss`, "sk-live"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: %q reached the log:\n%s", format, secret, out)
			}
		}
		for _, want := range []string{"service", "owner", "elapsed", "‹secret:API_KEY›", "‹secret:MAIL_PASS›", "‹secret:PIN›"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q is missing from the log:\n%s", format, want, out)
			}
		}
	}
}

func TestHandlerEnabled(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}), New(nil))
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Error("Enabled does not follow the next handler")
	}
}
