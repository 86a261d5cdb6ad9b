// Package redact scrubs secret values out of text before it leaves core: provider requests,
// logs, events, transcripts, the canvas, Telegram. Each occurrence of a stored value, or of
// one of its common encodings, becomes ‹secret:NAME›.
//
// # What is found
//
// For every value of at least MinLength (6) characters:
//
//   - the raw value;
//   - base64, standard and URL alphabets, padded or not, at any of the three byte
//     alignments, so the value is also found inside a longer base64 text: the HTTP Basic
//     form base64("user:" + value), a base64 JSON blob. The one or two base64 characters
//     that mix the value's bits with its neighbours' are taken with it;
//   - hex, lower and upper case;
//   - URL escaping: Go's QueryEscape and PathEscape, JavaScript's encodeURIComponent and
//     RFC 3986's strict form, each with upper- and lower-case %XX;
//   - JSON string escaping: as Go writes it (with and without HTML escaping), as JavaScript
//     and Python write it, with non-ASCII as \uXXXX in lower or upper case (Python's
//     ensure_ascii), with "/" as "\/" (PHP).
//
// Shorter values are left alone: six characters is where a random token stops matching
// ordinary words and numbers often enough to matter; Skipped names them so a doctor check can
// say so. Not covered: encodings of encodings (a base64 value URL-escaped), MIME base64 broken
// into lines, mixed-case hex, and compressed or encrypted text.
//
// # How
//
// New compiles every pattern of every secret into one table keyed by a pattern's first four
// bytes, with a 64 Ki-bit filter in front of it, so a text is scanned once whatever the
// number of secrets; a text with no secret in it is returned as it was, without allocating.
// Every match is found, and overlapping matches merge into one span, so two secrets that
// overlap are both removed whole (a match inside a longer one is dropped: longest first).
//
// JSON walks a JSON document and scrubs every string (and number) after decoding it, so an
// escape spelled in any way is still found, and the document stays valid JSON. Handler is a
// slog.Handler that scrubs the message and every attribute before the next handler sees them.
// Live holds a Redactor that is rebuilt from the vault when a secret changes.
//
// Connection strings are masked by db.Mask, not here.
package redact
