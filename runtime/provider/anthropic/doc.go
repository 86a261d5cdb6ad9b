// Package anthropic is the Anthropic Messages wire of the provider port, built on the
// official SDK (github.com/anthropics/anthropic-sdk-go, v1: the x-api-key header and
// anthropic-version 2023-06-01; v2 sends an api key as Bearer) over the runtime's own
// transport.
//
// The SDK is used for its request types and its SSE decoding only. Everything around it is
// explicit: the client is a bare MessageService (no environment, no profile, no ambient
// credential is read), the SDK's own retries are off (the port's [provider.RetryPolicy] is
// the one retry policy), its OpenTelemetry spans and trace headers are off, and its
// X-Stainless-* fingerprint headers are stripped.
//
// Credentials, per PROVIDER_CREDENTIAL_INVARIANT:
//   - api-key: the x-api-key header; any base URL.
//   - subscription-token (sk-ant-oat01-…, from `claude setup-token`): Authorization: Bearer,
//     the anthropic-beta oauth-2025-04-20 header, the default base URL only, and the system
//     prompt in the two-block form that /v1/messages demands of it: first, as its own
//     block, exactly [ClaudeCodeIdentity]; then the agent's system prompt.
//
// Every request carries max_tokens (the port's [provider.Limits], at most the model's
// ceiling) and streams: message_start, content_block_start/delta/stop (text_delta and
// input_json_delta), message_delta, message_stop, ping and error are read into the port's
// events. A stream that ends without message_stop is a dropped stream.
package anthropic
