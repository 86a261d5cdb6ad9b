package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"buddi/runtime/transport"
)

// Class is how a failure may be retried.
type Class int

// The classes. The zero value is Unknown: a failure nobody classified is not retried as if
// it were transient.
const (
	Unknown   Class = iota // the outcome cannot be known (a timeout); retried only on the short horizon
	Transient              // it will likely pass (429, 5xx, a reset connection); retry
	Permanent              // retrying the same request cannot help (400, 401, 403, 404); do not retry
)

// String names the class.
func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	}
	return "unknown"
}

// Kind is what went wrong, finer than the class.
type Kind string

// The kinds of failure.
const (
	KindRateLimited       Kind = "rate-limited"       // 429 or a rate limit error event
	KindOverloaded        Kind = "overloaded"         // 529, 503 or an overloaded error event
	KindServer            Kind = "server"             // another 5xx or server error event
	KindRefusedCredential Kind = "refused-credential" // 401: the credential was refused
	KindForbidden         Kind = "forbidden"          // 403: the credential may not do this
	KindNotFound          Kind = "not-found"          // 404: unknown model or endpoint
	KindBadRequest        Kind = "bad-request"        // 400, 413, 422: the request was refused
	KindConnection        Kind = "connection"         // the connection failed before any output
	KindStreamDropped     Kind = "stream-dropped"     // the stream broke off before its end
	KindTimeout           Kind = "timeout"            // a time limit ran out
	KindTooLarge          Kind = "too-large"          // the response passed the transport's byte limit
	KindCanceled          Kind = "canceled"           // the caller cancelled
	KindProtocol          Kind = "protocol"           // the provider sent something unreadable
	KindConfig            Kind = "config"             // the request or account is unusable as configured
)

// Error is every failure of a provider call. Its Class decides retries, RetryAt is when the
// provider said to come back (zero when it did not), and [Error.Sentence] is what the owner
// reads; Error() and the wrapped cause go to the log.
type Error struct {
	Wire        Wire      // the wire of the call
	Kind        Kind      // what went wrong
	Class       Class     // how it may be retried
	Status      int       // the HTTP status, when there was one (200 for an error event in a stream)
	Type        string    // the provider's error type (rate_limit_error, invalid_api_key, …)
	Message     string    // the provider's message, when it sent one
	RetryAt     time.Time // when the provider said to come back (Retry-After), or zero
	AfterOutput bool      // events had already reached the handler; never retried blindly
	Err         error     // the cause
}

// Error describes the failure for the log.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s provider: %s (%s", e.Wire, e.Kind, e.Class)
	if e.AfterOutput {
		b.WriteString(", after output")
	}
	if !e.RetryAt.IsZero() {
		fmt.Fprintf(&b, ", retry at %s", e.RetryAt.UTC().Format(time.RFC3339))
	}
	b.WriteString(")")
	if e.Status != 0 {
		fmt.Fprintf(&b, ": status %d", e.Status)
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " %s", e.Type)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Sentence is one plain sentence for the owner: no tool names, no stack, no secret.
func (e *Error) Sentence() string {
	switch e.Kind {
	case KindRateLimited:
		if !e.RetryAt.IsZero() {
			return fmt.Sprintf("The model provider is limiting this account's requests; it accepts more from %s.", e.RetryAt.Local().Format("15:04 on Jan 2"))
		}
		return "The model provider is limiting this account's requests; try again in a little while."
	case KindOverloaded:
		return "The model provider is overloaded right now; try again in a little while."
	case KindServer:
		return "The model provider had an internal error; try again in a little while."
	case KindRefusedCredential:
		return "The model provider refused this account's key or token; check or replace it."
	case KindForbidden:
		return "The model provider does not let this account do that; check the account's plan and model."
	case KindNotFound:
		return "The model provider does not know this model or address; check the account's model and base URL."
	case KindBadRequest:
		return "The model provider refused the request as invalid."
	case KindConnection:
		return "The model provider could not be reached."
	case KindStreamDropped:
		return "The connection to the model provider broke off in the middle of its reply."
	case KindTimeout:
		return "The model provider did not answer in time."
	case KindTooLarge:
		return "The model provider's reply was larger than buddi accepts."
	case KindCanceled:
		return "The request to the model was cancelled."
	case KindProtocol:
		return "The model provider sent a reply that buddi could not read."
	case KindConfig:
		return "This agent's model account is not usable as configured."
	}
	return "The request to the model failed."
}

// Classify returns the class of err over its whole cause chain: the class of the first
// [*Error] found, else what the underlying failure says (a reset or refused connection is
// transient, a timeout unknown, a cancellation or an oversized response permanent).
// Classify(nil) is Unknown.
func Classify(err error) Class {
	if err == nil {
		return Unknown
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Class
	}
	_, class := classifyCause(err)
	return class
}

// RetryAt returns when the provider said to come back, found anywhere in err's chain.
func RetryAt(err error) (time.Time, bool) {
	var pe *Error
	if errors.As(err, &pe) && !pe.RetryAt.IsZero() {
		return pe.RetryAt, true
	}
	return time.Time{}, false
}

// classifyCause classifies a failure that is not yet an [*Error]: a transport, network or
// context error.
func classifyCause(err error) (Kind, Class) {
	var tooLarge *transport.TooLargeError
	var dnsErr *net.DNSError
	var ne net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, context.Canceled):
		return KindCanceled, Permanent
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout, Unknown
	case errors.As(err, &tooLarge):
		return KindTooLarge, Permanent
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return KindProtocol, Unknown
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return KindConnection, Permanent
	case errors.As(err, &ne) && ne.Timeout():
		return KindTimeout, Unknown
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return KindConnection, Transient
	case errors.As(err, new(*net.OpError)), errors.As(err, &dnsErr):
		return KindConnection, Transient
	}
	return KindConnection, Unknown
}

// FromCause builds the [*Error] of a failure that came without an HTTP status: a
// connection, a timeout, a cancellation, a byte limit. afterOutput marks a failure after
// events reached the handler; a connection failure then is a dropped stream.
func FromCause(wire Wire, err error, afterOutput bool) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		pe.AfterOutput = pe.AfterOutput || afterOutput
		return pe
	}
	kind, class := classifyCause(err)
	if afterOutput && kind == KindConnection {
		kind = KindStreamDropped
	}
	return &Error{Wire: wire, Kind: kind, Class: class, AfterOutput: afterOutput, Err: err}
}

// FromStatus builds the [*Error] of an HTTP error response: status, the provider's error
// type and message, and the response headers for Retry-After. now is the time the response
// arrived.
func FromStatus(wire Wire, status int, errType, message string, header http.Header, now time.Time, cause error) *Error {
	e := &Error{Wire: wire, Status: status, Type: errType, Message: message, Err: cause}
	switch {
	case status == http.StatusTooManyRequests:
		e.Kind, e.Class = KindRateLimited, Transient
	case status == 529 || status == http.StatusServiceUnavailable:
		e.Kind, e.Class = KindOverloaded, Transient
	case status == http.StatusRequestTimeout:
		e.Kind, e.Class = KindTimeout, Transient
	case status >= 500:
		e.Kind, e.Class = KindServer, Transient
	case status == http.StatusUnauthorized:
		e.Kind, e.Class = KindRefusedCredential, Permanent
	case status == http.StatusForbidden:
		e.Kind, e.Class = KindForbidden, Permanent
	case status == http.StatusNotFound:
		e.Kind, e.Class = KindNotFound, Permanent
	default:
		e.Kind, e.Class = KindBadRequest, Permanent
	}
	if at, ok := ParseRetryAfter(header, now); ok {
		e.RetryAt = at
	}
	return e
}

// FromStreamError builds the [*Error] of an error event inside a stream (the HTTP status
// was 200), classified by the provider's error type.
func FromStreamError(wire Wire, errType, message string, afterOutput bool, cause error) *Error {
	e := &Error{Wire: wire, Status: http.StatusOK, Type: errType, Message: message, AfterOutput: afterOutput, Err: cause}
	switch t := strings.ToLower(errType); {
	case strings.Contains(t, "rate_limit"), t == "tokens", t == "requests":
		e.Kind, e.Class = KindRateLimited, Transient
	case strings.Contains(t, "overloaded"):
		e.Kind, e.Class = KindOverloaded, Transient
	case t == "api_error", t == "server_error", strings.Contains(t, "internal"):
		e.Kind, e.Class = KindServer, Transient
	case strings.Contains(t, "authentication"), t == "invalid_api_key":
		e.Kind, e.Class = KindRefusedCredential, Permanent
	case strings.Contains(t, "permission"):
		e.Kind, e.Class = KindForbidden, Permanent
	case strings.Contains(t, "not_found"):
		e.Kind, e.Class = KindNotFound, Permanent
	case strings.Contains(t, "invalid_request"), strings.Contains(t, "too_large"):
		e.Kind, e.Class = KindBadRequest, Permanent
	case strings.Contains(t, "timeout"):
		e.Kind, e.Class = KindTimeout, Unknown
	default:
		e.Kind, e.Class = KindServer, Unknown
	}
	return e
}
