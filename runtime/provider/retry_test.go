package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"buddi/runtime/transport"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration // from t0
		ok     bool
	}{
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{"http date", http.Header{"Retry-After": {t0.Add(42 * time.Second).Format(http.TimeFormat)}}, 42 * time.Second, true},
		{"date in the past", http.Header{"Retry-After": {t0.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"milliseconds first", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"absent", http.Header{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			at, ok := ParseRetryAfter(tt.header, t0)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && at.Sub(t0) != tt.want {
				t.Errorf("wait = %v, want %v", at.Sub(t0), tt.want)
			}
		})
	}
}

func fixedPolicy(waits *[]time.Duration) RetryPolicy {
	return RetryPolicy{
		Now:    func() time.Time { return t0 },
		Jitter: func() float64 { return 0 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			*waits = append(*waits, d)
			return ctx.Err()
		},
	}
}

func TestRetryPolicyDelay(t *testing.T) {
	t.Parallel()
	rateLimited := func(after time.Duration) error {
		return &Error{Kind: KindRateLimited, Class: Transient, RetryAt: t0.Add(after)}
	}
	tests := []struct {
		name    string
		attempt int
		err     error
		want    time.Duration
		again   bool
	}{
		{"transient, first retry", 1, &Error{Class: Transient}, 500 * time.Millisecond, true},
		{"transient, second retry", 2, &Error{Class: Transient}, time.Second, true},
		{"attempts exhausted", 3, &Error{Class: Transient}, 0, false},
		{"permanent", 1, &Error{Class: Permanent}, 0, false},
		{"unknown", 1, &Error{Class: Unknown}, 0, false},
		{"after output", 1, &Error{Class: Transient, AfterOutput: true}, 0, false},
		{"retry-after later than the curve", 1, rateLimited(20 * time.Second), 20 * time.Second, true},
		{"retry-after earlier than the curve", 2, rateLimited(100 * time.Millisecond), time.Second, true},
		{"retry-after at the cap", 1, rateLimited(60 * time.Second), 60 * time.Second, true},
		{"retry-after past the cap", 1, rateLimited(61 * time.Second), 0, false},
		{"a bare reset connection", 1, fmt.Errorf("read: %w", syscall.ECONNRESET), 500 * time.Millisecond, true},
	}
	var waits []time.Duration
	p := fixedPolicy(&waits)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, again := p.Delay(tt.attempt, tt.err)
			if got != tt.want || again != tt.again {
				t.Errorf("Delay = %v, %v; want %v, %v", got, again, tt.want, tt.again)
			}
		})
	}
}

func TestRetryPolicyJitterAndCeiling(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{MaxAttempts: 20, Jitter: func() float64 { return 0.999 }}
	err := &Error{Class: Transient}
	d1, _ := p.Delay(1, err)
	if d1 < 999*time.Millisecond || d1 > time.Second {
		t.Errorf("first delay with jitter near 1 = %v, want just under 1s", d1)
	}
	d10, _ := p.Delay(10, err)
	if d10 > DefaultMaxDelay {
		t.Errorf("tenth delay = %v, above the ceiling %v", d10, DefaultMaxDelay)
	}
}

func TestRetryPolicyRun(t *testing.T) {
	t.Parallel()
	t.Run("retries a transient failure before output", func(t *testing.T) {
		t.Parallel()
		var waits []time.Duration
		n := 0
		res, err := fixedPolicy(&waits).Run(t.Context(), WireAnthropic, Limits{}, nil, func(ctx context.Context, h Handler) (Result, error) {
			n++
			if n < 3 {
				return Result{}, io.ErrUnexpectedEOF
			}
			h(Event{Type: EventTextDelta, Text: "ok"})
			return Result{}, nil
		})
		if err != nil || res.Attempts != 3 {
			t.Fatalf("Run = %v attempts, %v; want 3, nil", res.Attempts, err)
		}
		if fmt.Sprint(waits) != "[500ms 1s]" {
			t.Errorf("waits = %v, want [500ms 1s]", waits)
		}
	})
	t.Run("never retries after output", func(t *testing.T) {
		t.Parallel()
		var waits []time.Duration
		var seen []Event
		res, err := fixedPolicy(&waits).Run(t.Context(), WireOpenAI, Limits{}, func(e Event) { seen = append(seen, e) }, func(ctx context.Context, h Handler) (Result, error) {
			h(Event{Type: EventTextDelta, Text: "half"})
			return Result{}, fmt.Errorf("read body: %w", syscall.ECONNRESET)
		})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindStreamDropped || pe.Class != Transient || !pe.AfterOutput {
			t.Fatalf("err = %v, want a transient stream-dropped error after output", err)
		}
		if res.Attempts != 1 || len(waits) != 0 || len(seen) != 1 {
			t.Errorf("attempts %d, waits %v, events %d; want 1, none, 1", res.Attempts, waits, len(seen))
		}
	})
	t.Run("the time limit covers the waits", func(t *testing.T) {
		t.Parallel()
		p := RetryPolicy{Jitter: func() float64 { return 0 }} // real sleeps: 500ms, longer than the limit
		_, err := p.Run(t.Context(), WireOpenAI, Limits{Timeout: 20 * time.Millisecond}, nil, func(ctx context.Context, h Handler) (Result, error) {
			return Result{}, &Error{Kind: KindOverloaded, Class: Transient}
		})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindTimeout || pe.Class != Unknown {
			t.Fatalf("err = %v, want a timeout of class unknown", err)
		}
	})
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Unknown},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), Transient},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), Transient},
		{"unexpected EOF", io.ErrUnexpectedEOF, Transient},
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), Unknown},
		{"transport timeout", &transport.TimeoutError{Phase: "body"}, Unknown},
		{"canceled", context.Canceled, Permanent},
		{"too large", fmt.Errorf("read: %w", &transport.TooLargeError{Limit: 1}), Permanent},
		{"provider error deep in a chain", fmt.Errorf("run: %w", fmt.Errorf("turn: %w", &Error{Class: Permanent})), Permanent},
		{"provider error in a join", errors.Join(errors.New("other"), &Error{Class: Transient}), Transient},
		{"anything else", errors.New("mystery"), Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFromStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		kind   Kind
		class  Class
	}{
		{400, KindBadRequest, Permanent},
		{401, KindRefusedCredential, Permanent},
		{403, KindForbidden, Permanent},
		{404, KindNotFound, Permanent},
		{413, KindBadRequest, Permanent},
		{429, KindRateLimited, Transient},
		{500, KindServer, Transient},
		{502, KindServer, Transient},
		{503, KindOverloaded, Transient},
		{529, KindOverloaded, Transient},
	}
	for _, tt := range tests {
		e := FromStatus(WireAnthropic, tt.status, "", "", http.Header{"Retry-After": {"3"}}, t0, nil)
		if e.Kind != tt.kind || e.Class != tt.class {
			t.Errorf("status %d: %s/%s, want %s/%s", tt.status, e.Kind, e.Class, tt.kind, tt.class)
		}
		if !e.RetryAt.Equal(t0.Add(3 * time.Second)) {
			t.Errorf("status %d: RetryAt %v", tt.status, e.RetryAt)
		}
		if e.Sentence() == "" || e.Error() == "" {
			t.Errorf("status %d: empty sentence or message", tt.status)
		}
	}
}
