// Package providertest is for tests: a scripted model server on loopback that speaks the
// Anthropic Messages and OpenAI Chat Completions wires, streaming included, so the real
// adapters (and the real transport, over TLS) run end to end. Production code never imports
// it.
//
// A test starts one with [New], scripts the model's replies in order with
// [Server.Script] — text, tool calls, error statuses with their headers (a 429 with
// Retry-After), an error event inside a stream, a connection dropped mid-stream, a reply
// that never comes — and afterwards inspects every request the server received with
// [Server.Requests].
//
// The server is as strict as the real services, and refuses, before any scripted reply is
// used:
//   - a missing or wrong credential (401): x-api-key or, for the subscription token,
//     Authorization: Bearer with the OAuth beta header on the Messages wire; Bearer on
//     Chat Completions;
//   - a subscription-token request whose first system block is not exactly the Claude Code
//     identity, as its own block;
//   - a Messages request without the anthropic-version header or without max_tokens;
//   - a tool name outside ^[a-zA-Z0-9_-]{1,64}$, in a tool definition or in a call;
//   - a tool result that answers no call of the message before it, and a tool call left
//     unanswered by the message after it;
//   - malformed JSON, a missing model or messages, an empty text block, a request that does
//     not ask to stream (this server streams only).
//
// The server's certificate is its own; [Server.TransportConfig] gives a transport.Config
// that trusts it and dials every host name to the server, so an adapter left at its
// default base URL (https://api.anthropic.com) reaches the server unchanged.
package providertest
