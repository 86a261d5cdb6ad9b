// Package metrics is buddi's Prometheus registry and its instruments, served at /metrics on
// the dashboard behind the owner's session.
//
// Other packages record what happened through small functions (RunStarted, ToolCall,
// ModelStep, ActorDecision, …); what the database knows (approvals waiting, the queue's jobs
// by kind and state, Telegram's last poll) is read when the page is scraped, each query under
// a short deadline. The registry is buddi's own, never the global default one, which
// libraries linked into buddi may write to.
//
// Traces (OpenTelemetry) start only when an exporter is configured: see Traces.
package metrics
