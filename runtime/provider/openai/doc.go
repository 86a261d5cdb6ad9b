// Package openai is the OpenAI Chat Completions wire of the provider port, built on the
// official SDK (github.com/openai/openai-go/v3) over the runtime's own transport. It serves
// OpenAI and any compatible endpoint, named by its base URL.
//
// It never claims to be OpenAI: the client is a bare ChatCompletionService (no
// OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_BASE_URL or custom headers read
// from the environment), the User-Agent is buddi's, the SDK's X-Stainless-* headers are
// stripped, and the OpenAI-Organization and OpenAI-Project headers are sent only when the
// account configures them. The SDK's own retries are off: the port's
// [provider.RetryPolicy] is the one retry policy.
//
// The only credential kind is an api key, sent as Authorization: Bearer. The Claude Code
// identity block and the subscription token never reach this wire
// (PROVIDER_CREDENTIAL_INVARIANT).
//
// Requests stream with stream_options.include_usage. Text deltas are passed on as they
// come; tool_calls deltas are assembled by their index (a call's id and name arrive once,
// its arguments in pieces, and the pieces of several calls may interleave). A stream that
// ends without a finish_reason is a dropped stream; the SDK stops at [DONE].
package openai
