package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultOutcomeWait is how long an outcome is held in memory, by default, while the
// database cannot take it.
const DefaultOutcomeWait = 2 * time.Minute

// defaultAttemptTimeout bounds one write of an outcome: a stopped server answers nothing,
// and a healthy one commits an outcome in milliseconds.
const defaultAttemptTimeout = 10 * time.Second

// persist writes what an effect became. The effect has happened (or may have), so the
// outcome is held in memory and the write is tried again, with a growing pause, for as long
// as the database does not answer: until it does, until OutcomeWait has passed, or until
// ctx ends. Each attempt runs on a context of its own that ctx's cancellation does not
// reach, so a stop just after the effect still records it. An answer from the database that
// is a refusal (a constraint, a bug) is returned at once. write must be safe to repeat: an
// attempt whose commit was sent but not acknowledged may have taken effect.
func (e *Executor) persist(ctx context.Context, what string, write func(ctx context.Context) error) error {
	wait := e.OutcomeWait
	if wait <= 0 {
		wait = DefaultOutcomeWait
	}
	per := e.attemptTimeout
	if per <= 0 {
		per = defaultAttemptTimeout
	}
	deadline := time.Now().Add(wait)
	pause := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), per)
		err := write(actx)
		cancel()
		if err == nil {
			if attempt > 1 {
				e.log.Info("the database answered again; the outcome is recorded", "outcome", what, "attempts", attempt)
			}
			return nil
		}
		if !unreachable(err) {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			e.log.Error("the database did not take an outcome in time; it is lost, and the effect will show as unknown", "outcome", what, "waited", wait, "err", err)
			return fmt.Errorf("record %s: the database did not answer for %v, so the outcome is lost and the effect will show as unknown: %w", what, wait, err)
		}
		if attempt == 1 {
			e.log.Warn("the database cannot take an outcome; it is held and tried again", "outcome", what, "err", err)
		}
		if e.onRetry != nil {
			e.onRetry(what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("record %s: stopped while the database did not answer, so the outcome is lost and the effect will show as unknown: %w", what, errors.Join(err, context.Cause(ctx)))
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// unreachable reports whether err means the database did not answer (the connection failed
// or was lost, the server is shutting down or restarting, an attempt timed out), as opposed
// to an answer that refuses the statement, which no retry would change.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"): // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, starting
			return true
		case pgErr.Code == "53300", pgErr.Code == "40001", pgErr.Code == "40P01": // too many connections, serialisation, deadlock
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err), pgconn.SafeToRetry(err):
		return true
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	}
	return false
}
