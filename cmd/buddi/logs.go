package main

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"buddi/doctor"
	"buddi/internal/logfile"
	"buddi/internal/timezone"
)

// logsCmd prints buddi serve's log file. It reads files only: no server, no database.
type logsCmd struct {
	Follow bool   `short:"f" help:"Keep printing lines as buddi writes them (across a rotation too), until Ctrl-C."`
	Since  string `help:"Only lines from this time on: a span back from now (10m, 2h, 3d) or a time in your zone (2026-12-02T08:00, 2026-12-02 08:00, 2026-12-02, 08:00 for today, or RFC 3339)."`
	JSON   bool   `name:"json" help:"Print the file's lines as they are: one JSON object a line (time, level, msg, then the line's own fields)."`
}

func (c logsCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	zone := timezone.Local().Location()
	since, err := parseSince(c.Since, time.Now(), zone)
	if err != nil {
		return &exitError{code: doctor.ExitUsage, err: err}
	}
	out := env.stdout
	var buf *bufio.Writer
	if !c.Follow { // a follower prints each line as it comes
		buf = bufio.NewWriterSize(env.stdout, 64<<10)
		out = buf
	}
	emit := func(line []byte) error {
		_, err := fmt.Fprintf(out, "%s\n", line)
		return err
	}
	if !c.JSON {
		emit = logfile.NewRenderer(out, zone).Line
	}
	err = logfile.Read(env.ctx, logfile.Dir(cfg.Home), logfile.ReadOptions{Since: since, Follow: c.Follow}, emit)
	if buf != nil {
		if ferr := buf.Flush(); err == nil {
			err = ferr
		}
	}
	if errors.Is(err, logfile.ErrNoLog) {
		return &exitError{code: doctor.ExitDoFirst, err: fmt.Errorf("buddi has not run with this home (%s), so there is no log yet: `buddi serve` writes it (or set BUDDI_HOME to the home buddi runs with)", cfg.Home)}
	}
	return err
}

// sinceLayouts are the times --since reads, in the owner's zone unless they give one.
var sinceLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// parseSince reads --since: a span back from now or a time in zone (the owner's). Empty is
// the zero time (all lines).
func parseSince(s string, now time.Time, zone *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := parseSpan(s); ok {
		return now.Add(-d), nil
	}
	for _, layout := range sinceLayouts {
		if t, err := time.ParseInLocation(layout, s, zone); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04", "15:04:05"} { // today
		if t, err := time.ParseInLocation(layout, s, zone); err == nil {
			y, m, d := now.In(zone).Date()
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, zone), nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a span (10m, 2h, 3d) nor a time (2026-12-02T08:00): give one of those", s)
}

// parseSpan reads a Go duration or a whole number of days ("3d"); negative spans are refused.
func parseSpan(s string) (time.Duration, bool) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, false
		}
		return time.Duration(n) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
