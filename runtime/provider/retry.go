package provider

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of a [RetryPolicy] whose fields are zero.
const (
	DefaultMaxAttempts   = 3
	DefaultBaseDelay     = time.Second
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// RetryPolicy is the one retry policy of both wires, inside one call. Only a [Transient]
// failure is retried, and only when no event had reached the handler: a stream that broke
// off after output is reported, classified, never retried blindly. Unknown failures
// (timeouts) are left to the queue's short horizon.
//
// The wait before the next attempt is the exponential curve (BaseDelay doubling up to
// MaxDelay, with jitter), or the time the provider named in Retry-After when that is later.
// A Retry-After further away than MaxRetryAfter (60 s) is not waited for in a process: the
// call ends with the error, whose RetryAt the queue uses to schedule the next attempt.
//
// The zero value works. Now, Sleep and Jitter are injectable so tests assert the waits
// instead of waiting.
type RetryPolicy struct {
	MaxAttempts   int           // attempts in all, the first included; default 3
	BaseDelay     time.Duration // the first backoff step; default 1 s
	MaxDelay      time.Duration // the curve's ceiling; default 30 s
	MaxRetryAfter time.Duration // the longest Retry-After waited for in process; default 60 s

	Now    func() time.Time                                 // default time.Now
	Sleep  func(ctx context.Context, d time.Duration) error // default: a timer, or ctx's end
	Jitter func() float64                                   // a number in [0, 1); default math/rand/v2

	// OnRetry, when set, hears of each retry before its wait: the attempt that failed
	// (from 1), the wait, and the failure. For logs and for telling the owner.
	OnRetry func(attempt int, wait time.Duration, err *Error)
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Jitter == nil {
		p.Jitter = rand.Float64
	}
	return p
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Delay returns the wait before the attempt after attempt (counted from 1) failed with err,
// and whether there is to be one at all.
func (p RetryPolicy) Delay(attempt int, err error) (time.Duration, bool) {
	p = p.withDefaults()
	if attempt >= p.MaxAttempts || Classify(err) != Transient {
		return 0, false
	}
	var pe *Error
	if errors.As(err, &pe) && pe.AfterOutput {
		return 0, false
	}
	curve := float64(p.BaseDelay) * math.Pow(2, float64(attempt-1))
	curve = math.Min(curve, float64(p.MaxDelay))
	wait := time.Duration(curve/2 + p.Jitter()*curve/2)
	if at, ok := RetryAt(err); ok {
		told := at.Sub(p.Now())
		if told > p.MaxRetryAfter {
			return 0, false
		}
		wait = max(wait, told)
	}
	return wait, true
}

// Run runs one call under the policy: attempt is called with a handler that passes events
// on to h and notes that output happened; a failure is turned into an [*Error], and retried
// while [RetryPolicy.Delay] allows. limits.Timeout bounds the whole run, waits included.
// The result carries the number of attempts made.
func (p RetryPolicy) Run(ctx context.Context, wire Wire, limits Limits, h Handler, attempt func(ctx context.Context, h Handler) (Result, error)) (Result, error) {
	p = p.withDefaults()
	if limits.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limits.Timeout)
		defer cancel()
	}
	if h == nil {
		h = func(Event) {}
	}
	for n := 1; ; n++ {
		output := false
		res, err := attempt(ctx, func(e Event) {
			output = true
			h(e)
		})
		res.Attempts = n
		if err == nil {
			return res, nil
		}
		pe := FromCause(wire, err, output)
		if ctx.Err() != nil && pe.Kind != KindTimeout && pe.Kind != KindCanceled {
			// The call's own deadline or the caller's cancellation, whatever the wire made of it.
			pe = &Error{Wire: wire, Kind: KindCanceled, Class: Permanent, AfterOutput: output, Err: err}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				pe.Kind, pe.Class = KindTimeout, Unknown
			}
		}
		wait, again := p.Delay(n, pe)
		if !again {
			return res, pe
		}
		if p.OnRetry != nil {
			p.OnRetry(n, wait, pe)
		}
		h(Event{Type: EventWaiting, RetryAt: p.Now().Add(wait), Text: pe.Sentence()})
		if err := p.Sleep(ctx, wait); err != nil {
			stopped := &Error{Wire: wire, Kind: KindCanceled, Class: Permanent, Err: errors.Join(err, pe)}
			if errors.Is(err, context.DeadlineExceeded) {
				stopped.Kind, stopped.Class = KindTimeout, Unknown
			}
			return res, stopped
		}
	}
}

// ParseRetryAfter reads when the provider said to come back from h: retry-after-ms
// (milliseconds), or Retry-After as seconds or as an HTTP date. now is when the response
// arrived. A time in the past is now.
func ParseRetryAfter(h http.Header, now time.Time) (time.Time, bool) {
	if h == nil {
		return time.Time{}, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return now.Add(time.Duration(ms * float64(time.Millisecond))), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return time.Time{}, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) || secs > 1e9 {
			return time.Time{}, false
		}
		return now.Add(time.Duration(secs * float64(time.Second))), true
	}
	if at, err := http.ParseTime(v); err == nil {
		if at.Before(now) {
			return now, true
		}
		return at, true
	}
	return time.Time{}, false
}
