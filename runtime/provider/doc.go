// Package provider is the runtime's port to language models: the [Provider] interface that
// the agent loop calls, and what both wires share.
//
// A [Provider] streams one turn. The caller gives a [Request] — the model, a system prompt,
// the conversation as [Message]s made of [Part]s (text, images, tool calls, tool results),
// the [Tool] definitions and the [Limits] — and a [Handler] that receives [Event]s as they
// arrive: text deltas, a tool call's start, argument deltas and end, then usage and the stop
// reason. The call returns the assembled [Result].
//
// The wires live below this package (provider/anthropic, provider/openai); this package
// imports neither, so the loop depends on the port only. What the wires share is here:
//
//   - [Credential]: the secret a call is made with, passed in by the caller (from the vault
//     or an explicitly named .env entry) and never read from the environment; it does not
//     print. [CheckCredential] enforces PROVIDER_CREDENTIAL_INVARIANT.
//   - [Capabilities]: what an adapter carries for a model, so the loop can degrade what it
//     cannot into a placeholder.
//   - [Error]: every failure of a call, classified [Transient], [Permanent] or [Unknown] over
//     the whole cause chain by [Classify], with a RetryAt when the provider said when to
//     come back, and a sentence for the owner.
//   - [RetryPolicy]: the one retry policy of both wires: Retry-After honoured up to 60 s,
//     exponential backoff with jitter otherwise, and never a blind retry of a stream that
//     had already produced output.
//   - [ToolNames]: the reversible, collision-free mapping of buddi's dotted tool names
//     (developer.run) to the wire's ^[a-zA-Z0-9_-]{1,64}$ and back.
package provider
