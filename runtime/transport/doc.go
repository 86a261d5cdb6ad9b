// Package transport is the one outbound HTTP transport of buddi's runtime: every model
// provider, and every other caller that speaks HTTP to the outside, sends its requests
// through a [Transport].
//
// It speaks HTTP/1.1 only and holds nothing between requests (keep-alive off), at the cost
// of one TCP and TLS handshake per request. An HTTP/2 session or a pooled socket that the far
// end closed while it sat idle cannot then fail every later request at once. It reads no
// proxy from the environment and follows no redirect (a redirect could carry a credential
// header to another origin).
//
// It owns:
//   - a response byte limit ([Config.MaxResponseBytes]): a longer body fails its read with a
//     [*TooLargeError];
//   - timeouts: dialling, the TLS handshake, the wait for the response headers, and the
//     longest silence between two reads of a body ([Config.ReadIdleTimeout]), so a half-open
//     connection cannot hold a caller for hours; each expiry is a [*TimeoutError];
//   - a pluggable lookup ([Config.Lookup]), so that an address guard can be the socket's own
//     resolver, and a pluggable dialer ([Config.DialContext]) for tests;
//   - a single retry, and only for a request whose reused idle socket failed before a single
//     response byte arrived (see [ShouldRetry]). An aborted request is never retried. With
//     keep-alive off no socket is ever reused, so the retry is a rule kept for the day a
//     caller needs pooling, not a path that runs today.
package transport
