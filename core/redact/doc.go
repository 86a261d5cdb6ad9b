// Package redact scrubs secret values out of text before it leaves core: provider requests,
// logs, events, transcripts, the live stream, the canvas, Telegram. Each occurrence of a
// stored value, or of one of its common encodings, becomes ‹secret:NAME›.
//
// # What is found
//
// For every value of at least MinLength (6) characters, in the text itself:
//
//   - the raw value;
//   - base64, standard and URL alphabets, padded or not, at any of the three byte
//     alignments, so the value is also found inside a longer base64 text: the HTTP Basic
//     form base64("user:" + value), a base64 JSON blob. The one or two base64 characters
//     that mix the value's bits with its neighbours' are taken with it;
//   - hex, all lower or all upper case;
//   - the query form of URL escaping (a space as "+").
//
// And in views of the text, each decoded one way, a match replacing the text it was decoded
// from:
//
//   - lines joined: a line break ("\n" or "\r\n", and the indentation after it) between a
//     line ending in 16 or more base64 characters and one beginning with one is dropped, so
//     base64 (or hex) wrapped at any width (PEM's 64, MIME's 76) is found whole;
//   - JSON escapes decoded, wherever they are: \uXXXX in either case, surrogate pairs, the
//     short escapes, in any mix with plain characters (every character escaped, or some);
//   - percent escapes decoded, in either case and any mix;
//   - hex decoded, in any case, at both alignments, across one separator between digits
//     (colon, space or dash: "73:6b:2d", "736B 2D6C") and across a line break with
//     indentation (keys as openssl prints them); and dumps (lines that begin with an
//     eight-digit offset and ": " or two spaces: xxd, hexdump -C), whose hex column is read
//     from line to line, a match taking the rest of its last line so that the character
//     column beside the digits goes with them.
//
// # What cannot be found
//
// Shorter values (Skipped names them, so a doctor check can say so). A part of a value (its
// first half, every other character). Encodings of encodings in the text, except base64 or
// hex behind percent escapes, and anything inside a JSON document's strings, which JSON
// decodes first. Base64 wrapped at fewer than 16 columns, hex split by two or more separators
// or of mixed case across a line break, a dump in another layout (od, a dump whose offset is
// not eight digits). Any other transformation: compression, encryption, a hash, a
// different character encoding (UTF-16), spelling the value out, reversing it. What the
// redactor never sees: a secret that is not in the vault.
//
// # How
//
// New compiles every pattern of every secret into one table keyed by a pattern's first four
// bytes, with a 64 Ki-bit filter in front of it, so a text is scanned once whatever the
// number of secrets; a text with no secret in it and nothing to decode is returned as it
// was, without allocating. A view is built only when the text has what it decodes, and keeps
// only the stretches around what it decoded. Every match is found, and overlapping matches
// merge into one span, so two secrets that overlap are both removed whole (a match inside a
// longer one is dropped: longest first).
//
// Stream redacts a text that arrives in pieces (a model's streamed reply): it holds back the
// end of the text only while that end could still become a secret in any of its forms (the
// beginning of a pattern, an escape not yet complete, a line break whose next line is not
// there yet), so what it returns never holds a secret split across pieces, and what it
// returns, joined, is what String returns for the whole text.
//
// JSON walks a JSON document and scrubs every string (and number) after decoding it, so an
// escape spelled in any way is still found, and the document stays valid JSON. Handler is a
// slog.Handler that scrubs the message and every attribute before the next handler sees them.
// Live holds a Redactor for the vault and asks the vault for its version before each use, so
// a secret set by another process is redacted from the next use on.
//
// Connection strings are masked by db.Mask, not here.
package redact
