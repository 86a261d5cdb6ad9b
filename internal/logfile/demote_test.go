package logfile

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestDemoteWritesInfoAtDebug(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(Demote(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))).With("service", "queue")
	log.Info("producer: Producer job counts")
	log.Debug("debug stays away")
	log.Warn("a warning")
	log.Error("an error")
	got := buf.String()
	if strings.Contains(got, "Producer job counts") || strings.Contains(got, "debug stays") {
		t.Errorf("info or debug shown at info:\n%s", got)
	}
	if !strings.Contains(got, `level=WARN msg="a warning" service=queue`) || !strings.Contains(got, "level=ERROR") {
		t.Errorf("warnings and errors lost:\n%s", got)
	}
	buf.Reset()
	log = slog.New(Demote(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.Info("producer: Producer job counts")
	if !strings.Contains(buf.String(), `level=DEBUG msg="producer: Producer job counts"`) {
		t.Errorf("info not at debug:\n%s", buf.String())
	}
}
