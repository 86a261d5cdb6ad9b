package events

import "time"

// The catalogue, family by family. Each kind says when it is written and which row's
// conversation_id it carries; its payload struct follows it. "Omitted" means the field is
// left out of the JSON object when it is empty.

// Runs: one turn of an agent (runtime/run). Every run event carries its conversation.
const (
	// RunStarted is written when a run has pinned its agent, account and model, before its
	// first provider call; a resumed run reads it back.
	RunStarted Kind = "run.started"
	// RunStep is written when a model's answer is committed to the transcript, with the
	// pending input that step saw, in the same transaction.
	RunStep Kind = "run.step"
	// RunToolIntent is written before a run hands a tool call to the executor, so that after
	// a restart the run knows the call may have been dispatched.
	RunToolIntent Kind = "run.tool_intent"
	// RunSuspended is written when a run stops to wait for the owner's decision on an action.
	RunSuspended Kind = "run.suspended"
	// RunFinished is written when a run ended with an answer and its conversation was freed.
	RunFinished Kind = "run.finished"
	// RunFailed is written when a run ended without an answer and its conversation was freed.
	RunFailed Kind = "run.failed"
	// RunRecovered is written at start for a run whose job died with the previous buddi: the
	// dead jobs are ended and the run is enqueued again, in one transaction.
	RunRecovered Kind = "run.recovered"
)

// RunStartedPayload is what a run pinned (runtime/run.Meta, converted field for field).
type RunStartedPayload struct {
	RunID          string `json:"run_id"`          // the run
	ConversationID string `json:"conversation_id"` // its conversation
	Agent          string `json:"agent"`           // the agent's id
	Account        string `json:"account"`         // the provider account it is pinned to
	Model          string `json:"model"`           // the model it is pinned to
	Wire           string `json:"wire"`            // the account's wire ("anthropic", "openai")
	Surface        string `json:"surface"`         // where the owner wrote; empty when unattended
	Interactive    bool   `json:"interactive"`     // somebody waits: the short retry horizon
	// DelegatedBy is the agent that asked for the run through agent.delegate, if any.
	DelegatedBy string `json:"delegated_by,omitempty"`
	// Depth is how many delegations deep the run is (0: the owner's, a mission's, a wake's).
	Depth int `json:"depth,omitempty"`
	// Chain is every agent that asked on the way down, the first asker first.
	Chain []string `json:"chain,omitempty"`
	// AskedIn is the asking run's conversation, for a delegated run.
	AskedIn string `json:"asked_in,omitempty"`
	// AskedRun is the asking run, for a delegated run.
	AskedRun string `json:"asked_run,omitempty"`
	// Origin is the surface the first request on the way down came from, for a delegated run.
	Origin string `json:"origin,omitempty"`
}

// RunStepPayload is one committed model step.
type RunStepPayload struct {
	RunID          string `json:"run_id"`          // the run
	StopReason     string `json:"stop_reason"`     // why the model stopped ("end_turn", "tool_use", …)
	InputTokens    int64  `json:"input_tokens"`    // prompt tokens billed at the normal rate
	OutputTokens   int64  `json:"output_tokens"`   // generated tokens
	Attempts       int    `json:"attempts"`        // HTTP attempts made, retries included
	DeliveredInput int    `json:"delivered_input"` // pending owner messages the step saw
}

// RunToolIntentPayload names the call a run is about to hand to the executor.
type RunToolIntentPayload struct {
	RunID  string `json:"run_id"`  // the run
	CallID string `json:"call_id"` // the model's id for the call
	Tool   string `json:"tool"`    // the tool's name
}

// RunSuspendedPayload names the action a run waits on.
type RunSuspendedPayload struct {
	RunID    string `json:"run_id"`    // the run
	ActionID string `json:"action_id"` // the action awaiting the owner
}

// RunFinishedPayload ends a run.
type RunFinishedPayload struct {
	RunID   string `json:"run_id"`   // the run
	NextRun string `json:"next_run"` // the run started for input that came meanwhile, or ""
}

// RunFailedPayload says why a run failed and whether it is tried again.
type RunFailedPayload struct {
	RunID    string `json:"run_id"`   // the run
	Class    string `json:"class"`    // "transient", "permanent" or "unknown"
	Sentence string `json:"sentence"` // what the owner is told
	Retry    bool   `json:"retry"`    // the turn is tried again (nothing of it may have happened)
	Cause    string `json:"cause"`    // the cause's first line, with stored secrets taken out
}

// RunRecoveredPayload names the jobs a stopped buddi left running for the run.
type RunRecoveredPayload struct {
	RunID    string  `json:"run_id"`    // the run, enqueued again
	DeadJob  int64   `json:"dead_job"`  // the first of its dead jobs
	DeadJobs []int64 `json:"dead_jobs"` // all its dead jobs, ended
}

// Conversations and the owner's messages (core/conversation). Each carries its conversation.
const (
	// ConversationStarted is written when a new conversation with an agent is opened.
	ConversationStarted Kind = "conversation.started"
	// ConversationEnded is written when a conversation is closed (idle, too long, ended by
	// the owner, or replaced by a new one).
	ConversationEnded Kind = "conversation.ended"
	// MessageReceived is written when an owner's message starts a new run.
	MessageReceived Kind = "message.received"
	// MessageJoined is written when an owner's message arrives while a run is active and is
	// queued as input to that run.
	MessageJoined Kind = "message.joined"
)

// ConversationStartedPayload opens a conversation.
type ConversationStartedPayload struct {
	Agent   string `json:"agent"`   // the agent's id
	Surface string `json:"surface"` // the surface it began on
}

// ConversationEndedPayload closes a conversation.
type ConversationEndedPayload struct {
	Reason           string `json:"reason"`            // "idle", "size", "ended" or "new"
	PendingApprovals int    `json:"pending_approvals"` // approvals still waiting, carried over
}

// MessageReceivedPayload names the run a message started.
type MessageReceivedPayload struct {
	RunID   string `json:"run_id"`  // the run it started
	Surface string `json:"surface"` // where the owner wrote
	Agent   string `json:"agent"`   // the conversation's agent
}

// MessageJoinedPayload names the run a message joined.
type MessageJoinedPayload struct {
	RunID   string `json:"run_id"`  // the active run it joined
	Surface string `json:"surface"` // where the owner wrote
}

// Tool calls through the executor (core/executor). Each carries the call's conversation.
const (
	// ToolCalled is written when an auto or session call is about to run, before its effect.
	ToolCalled Kind = "tool.called"
	// ToolRefused is written when a call is refused before anything ran (unknown tool, not
	// granted, blocked by policy, invalid arguments).
	ToolRefused Kind = "tool.refused"
	// ToolResult is written with a call's outcome, in the transaction that ends its attempt.
	ToolResult Kind = "tool.result"
)

// ToolCalledPayload is a call that runs without an approval.
type ToolCalledPayload struct {
	Tool   string `json:"tool"`    // the tool's name
	Agent  string `json:"agent"`   // the calling agent
	RunID  string `json:"run_id"`  // the calling run
	CallID string `json:"call_id"` // the model's id for the call
	Tier   string `json:"tier"`    // the tier it ran at ("auto", "session", …)
	Reason string `json:"reason"`  // why the permission engine allowed it
}

// ToolRefusedPayload is a refused call.
type ToolRefusedPayload struct {
	Tool   string `json:"tool"`   // the tool's name
	Agent  string `json:"agent"`  // the calling agent
	RunID  string `json:"run_id"` // the calling run
	Code   string `json:"code"`   // the refusal's code ("policy-blocked", …), or "refused"
	Reason string `json:"reason"` // the refusal, as the model is told it
}

// ToolResultPayload is a call's outcome.
type ToolResultPayload struct {
	Tool     string `json:"tool"`                // the tool's name
	Agent    string `json:"agent"`               // the calling agent
	RunID    string `json:"run_id"`              // the calling run
	CallID   string `json:"call_id"`             // the model's id for the call
	Status   string `json:"status"`              // "succeeded", "failed" or "unknown"
	IsError  bool   `json:"is_error"`            // the result the model reads is an error
	ActionID string `json:"action_id,omitempty"` // the approved action it executed; omitted for a direct call
	Error    string `json:"error,omitempty"`     // the error's first line; omitted on success
}

// Actions: gated calls and their approval's states (core/action, core/executor). Each
// carries the action's conversation.
const (
	// ActionProposed is written when a gated call becomes an action awaiting the owner.
	ActionProposed Kind = "action.proposed"
	// ActionApproved is written when an executing action goes back to approved because buddi
	// stopped before its effect began (it runs again).
	ActionApproved Kind = "action.approved"
	// ActionExecuting is written when an approved action is claimed for execution.
	ActionExecuting Kind = "action.executing"
	// ActionSucceeded is written when an executing action's effect succeeded.
	ActionSucceeded Kind = "action.succeeded"
	// ActionFailed is written when an executing action's effect failed.
	ActionFailed Kind = "action.failed"
	// ActionExpired is written when an approved action was not begun within the approval
	// window and is not run.
	ActionExpired Kind = "action.expired"
	// ActionRefused is written when an action is refused before its effect (the policy, the
	// tool's version or the effect changed since the approval, or its record was forged).
	ActionRefused Kind = "action.refused"
	// ActionUnknown is written when whether an effect happened cannot be known: an executing
	// action, or an auto or session call, whose execution timed out after dispatch or was cut
	// by a stop of buddi. The owner reviews it.
	ActionUnknown Kind = "action.unknown"
	// ActionForged is written when an action's stored record does not check under buddi's
	// seal: it is refused, never run.
	ActionForged Kind = "action.forged"
)

// ActionProposedPayload is a new action.
type ActionProposedPayload struct {
	ActionID string `json:"action_id"` // the action
	Tool     string `json:"tool"`      // the tool's name
	Version  string `json:"version"`   // the tool's version it was proposed for
	Agent    string `json:"agent"`     // the proposing agent
	RunID    string `json:"run_id"`    // the proposing run
	Hash     string `json:"hash"`      // the hash of what it will do, shown to the owner
	Summary  string `json:"summary"`   // the envelope's one-line summary
	Reason   string `json:"reason"`    // why the permission engine gated it
}

// ActionMovedPayload is a move of an action's approval from one state to another (the kind
// names the new state).
type ActionMovedPayload struct {
	ActionID string `json:"action_id"` // the action
	From     string `json:"from"`      // the state it left
	Reason   string `json:"reason"`    // why; may be empty
}

// ActionUnknownPayload is an effect of unknown outcome. An action's move to unknown fills
// action_id and from; an auto or session call's fills attempt, tool, run_id and call_id.
type ActionUnknownPayload struct {
	ActionID string `json:"action_id,omitempty"` // the action; omitted for a direct call
	From     string `json:"from,omitempty"`      // the state it left; omitted for a direct call
	Attempt  int64  `json:"attempt,omitempty"`   // the ledger's attempt of a direct call
	Tool     string `json:"tool,omitempty"`      // a direct call's tool
	RunID    string `json:"run_id,omitempty"`    // a direct call's run
	CallID   string `json:"call_id,omitempty"`   // a direct call's id
	Reason   string `json:"reason"`              // why the outcome is unknown
}

// ActionForgedPayload is an action refused because its record is not buddi's own.
type ActionForgedPayload struct {
	ActionID string `json:"action_id"` // the action
	Tool     string `json:"tool"`      // its tool
	Agent    string `json:"agent"`     // its agent
	Reason   string `json:"reason"`    // what does not check
}

// Approvals: the owner's decisions on actions (core/action). Each carries the action's
// conversation.
const (
	// ApprovalApproved is written when the owner approves an action, or a standing
	// permission covers it.
	ApprovalApproved Kind = "approval.approved"
	// ApprovalRejected is written when the owner rejects an action.
	ApprovalRejected Kind = "approval.rejected"
	// ApprovalExpired is written when a pending action passed its expiry, or an approved one
	// was not begun within the approval window.
	ApprovalExpired Kind = "approval.expired"
)

// ApprovalDecidedPayload is a decision on an action.
type ApprovalDecidedPayload struct {
	ActionID string            `json:"action_id"`      // the action
	Tool     string            `json:"tool"`           // its tool
	Surface  string            `json:"surface"`        // the owner surface that decided
	Picks    map[string]string `json:"picks,omitzero"` // the owner's choices; omitted under a standing permission
	Reason   string            `json:"reason"`         // the owner's words, or "covered by a standing permission"
}

// ApprovalExpiredPayload is an action that lapsed.
type ApprovalExpiredPayload struct {
	ActionID string `json:"action_id"` // the action
	Reason   string `json:"reason"`    // which lapse
}

// Standing permissions (core/action).
const (
	// PermissionGranted is written when the owner grants a standing permission; it carries
	// the conversation it is limited to, if any.
	PermissionGranted Kind = "permission.granted"
	// PermissionRevoked is written when the owner revokes a standing permission.
	PermissionRevoked Kind = "permission.revoked"
)

// PermissionGrantedPayload is a new standing permission.
type PermissionGrantedPayload struct {
	ID             int64     `json:"id"`                        // as in "standing:<id>"
	Agent          string    `json:"agent"`                     // the agent whose calls it covers
	Tool           string    `json:"tool"`                      // the tool's name
	ToolVersion    string    `json:"tool_version"`              // this plugin version only
	ConversationID string    `json:"conversation_id,omitempty"` // omitted: every conversation
	GrantedBy      string    `json:"granted_by"`                // the owner surface that granted it
	GrantedAt      time.Time `json:"granted_at"`                // when it was granted
}

// PermissionRevokedPayload ends a standing permission.
type PermissionRevokedPayload struct {
	ID      int64  `json:"id"`      // the permission
	Surface string `json:"surface"` // the owner surface that revoked it
}

// Provider accounts and agents' assignments (runtime/account).
const (
	// AccountAdded is written when the owner adds a provider account (or adds again one
	// whose row buddi did not seal).
	AccountAdded Kind = "account.added"
	// AccountEnabled is written when the owner switches an account on.
	AccountEnabled Kind = "account.enabled"
	// AccountDisabled is written when the owner switches an account off.
	AccountDisabled Kind = "account.disabled"
	// AccountRemoved is written when the owner removes an account no agent runs on.
	AccountRemoved Kind = "account.removed"
	// AccountForged is written, once per process and row, when a stored account or
	// assignment does not check under buddi's seal: it is not honoured and no key is sent.
	AccountForged Kind = "account.forged"
	// AgentAccountSet is written when the owner sets the account and model an agent runs on.
	AgentAccountSet Kind = "agent.account_set"
)

// AccountAddedPayload is a new account (never its secret).
type AccountAddedPayload struct {
	Name             string `json:"name"`              // the account's name
	Wire             string `json:"wire"`              // "anthropic" or "openai"
	Kind             string `json:"kind"`              // "api-key" or "subscription-token"
	BaseURL          string `json:"base_url"`          // empty: the wire's default
	SecretName       string `json:"secret_name"`       // the vault entry holding the secret
	ReplacedUnsealed bool   `json:"replaced_unsealed"` // it replaced a row buddi did not seal
}

// AccountSwitchedPayload names the account switched on or off.
type AccountSwitchedPayload struct {
	Name string `json:"name"` // the account's name
}

// AccountRemovedPayload names the removed account.
type AccountRemovedPayload struct {
	Name string `json:"name"` // the account's name
}

// AccountForgedPayload is a refused account row.
type AccountForgedPayload struct {
	Row    string `json:"row"`    // "account" or "assignment"
	Name   string `json:"name"`   // the account's name, or the agent's id
	Reason string `json:"reason"` // what does not check
	Fix    string `json:"fix"`    // what the owner does about it
}

// AgentAccountSetPayload is an agent's new assignment.
type AgentAccountSetPayload struct {
	Agent   string    `json:"agent"`   // the agent's id
	Account string    `json:"account"` // the account's name
	Model   string    `json:"model"`   // the model id on that account's wire
	SetAt   time.Time `json:"set_at"`  // when the owner set it
}

// Missions and reminders (scheduler).
const (
	// MissionAdded is written when a mission is created (by the owner or an agent).
	MissionAdded Kind = "mission.added"
	// MissionEnabled is written when a mission is switched on (which drops its end).
	MissionEnabled Kind = "mission.enabled"
	// MissionDisabled is written when a mission is switched off.
	MissionDisabled Kind = "mission.disabled"
	// MissionStarted is written when a mission's occurrence is claimed and its run started.
	MissionStarted Kind = "mission.started"
	// MissionReported is written when an unattended run reports to the owner: a mission's
	// occurrence settled as delivered, or the report of a run that is no occurrence. The
	// latter carries the run's conversation.
	MissionReported Kind = "mission.reported"
	// MissionSilent is written when an unattended run stays silent: a mission's occurrence
	// settled as silent, or a report withheld because the owner muted its subject (which
	// carries the run's conversation).
	MissionSilent Kind = "mission.silent"
	// MissionStillUseful is written when a mission has been silent StillUsefulAfter times in
	// a row: the owner is asked once whether to keep it.
	MissionStillUseful Kind = "mission.still_useful"
	// MissionEnded is written when an agent ends its own mission, or a mission passed its
	// end date and is switched off quietly.
	MissionEnded Kind = "mission.ended"
	// ReminderExpired is written when a reminder was not delivered within its grace after
	// its due time (buddi was not running) and is dropped.
	ReminderExpired Kind = "reminder.expired"
)

// MissionAddedPayload is a new mission.
type MissionAddedPayload struct {
	MissionID int64  `json:"mission_id"` // the mission
	Agent     string `json:"agent"`      // the agent it runs
	Cron      string `json:"cron"`       // its schedule
	Timezone  string `json:"timezone"`   // the schedule's time zone
}

// MissionSwitchedPayload names the mission switched on or off.
type MissionSwitchedPayload struct {
	MissionID int64 `json:"mission_id"` // the mission
}

// MissionStartedPayload is an occurrence that started.
type MissionStartedPayload struct {
	MissionID    int64     `json:"mission_id"`    // the mission
	OccurrenceID int64     `json:"occurrence_id"` // the occurrence
	Instant      time.Time `json:"instant"`       // the scheduled moment
	RunID        string    `json:"run_id"`        // the run it started
}

// MissionReportedPayload is a report delivered to the owner.
type MissionReportedPayload struct {
	MissionID    int64  `json:"mission_id,omitempty"`    // the mission; omitted for a run that is no occurrence
	OccurrenceID int64  `json:"occurrence_id,omitempty"` // the occurrence; omitted likewise
	RunID        string `json:"run_id"`                  // the reporting run
	Reason       string `json:"reason,omitempty"`        // the occurrence's reason ("reported"); omitted likewise
	Report       string `json:"report"`                  // what the owner reads
}

// MissionSilentPayload is a run that said nothing to the owner.
type MissionSilentPayload struct {
	MissionID    int64  `json:"mission_id,omitempty"`    // the mission; omitted when the owner muted the subject
	OccurrenceID int64  `json:"occurrence_id,omitempty"` // the occurrence; omitted likewise
	RunID        string `json:"run_id"`                  // the run
	Reason       string `json:"reason"`                  // why it stayed silent ("muted", or the run's words)
}

// MissionStillUsefulPayload asks the owner about a quiet mission.
type MissionStillUsefulPayload struct {
	MissionID int64  `json:"mission_id"` // the mission
	QuietRuns int    `json:"quiet_runs"` // silent runs in a row
	OwnerLine string `json:"owner_line"` // the question the owner reads
}

// MissionEndedPayload is a mission that ended: by its agent (by) or by its date (ends_on).
type MissionEndedPayload struct {
	MissionID int64      `json:"mission_id"`        // the mission
	By        string     `json:"by,omitempty"`      // the agent that ended it; omitted when its date passed
	EndsOn    *time.Time `json:"ends_on,omitempty"` // the end date that passed; omitted when an agent ended it
}

// ReminderExpiredPayload is a dropped reminder.
type ReminderExpiredPayload struct {
	ReminderID int64  `json:"reminder_id"` // the reminder
	Grace      string `json:"grace"`       // the grace it exceeded, as a Go duration ("6h0m0s")
}

// Sentinels (sentinels).
const (
	// SentinelFinding is written when a sentinel's finding speaks to the owner (new, back,
	// more urgent, or past its cooldown).
	SentinelFinding Kind = "sentinel.finding"
	// SentinelFailed is written when a sentinel's check failed or panicked.
	SentinelFailed Kind = "sentinel.failed"
	// SentinelWoke is written when due sentinel wakes started runs.
	SentinelWoke Kind = "sentinel.woke"
)

// SentinelFindingPayload is a finding the owner hears of.
type SentinelFindingPayload struct {
	Sentinel  string `json:"sentinel"`   // the sentinel's id
	Key       string `json:"key"`        // identifies the finding from one check to the next
	Severity  string `json:"severity"`   // "urgent" or "info"
	OwnerLine string `json:"owner_line"` // what the owner reads
}

// SentinelFailedPayload is a failed check.
type SentinelFailedPayload struct {
	Sentinel string `json:"sentinel"` // the sentinel's id
	Error    string `json:"error"`    // what went wrong
}

// SentinelWokePayload counts the runs wakes started.
type SentinelWokePayload struct {
	Runs int `json:"runs"` // runs started
}

// The developer plugin's processes and records (plugins/developer, app).
const (
	// DeveloperProcessStopped is written when buddi stops a workspace process whose agent
	// was removed.
	DeveloperProcessStopped Kind = "developer.process_stopped"
	// DeveloperForged is written, once per process and row, when a developer record does not
	// check under buddi's seal: it is not honoured.
	DeveloperForged Kind = "developer.forged"
	// ProcessGaveUp is written when a workspace process kept crashing past its restart
	// budget and was stopped for good.
	ProcessGaveUp Kind = "process.gave_up"
)

// DeveloperProcessStoppedPayload is a process buddi stopped.
type DeveloperProcessStoppedPayload struct {
	Agent  string `json:"agent"`  // the workspace's agent
	Name   string `json:"name"`   // the process's name
	Reason string `json:"reason"` // why it was stopped
}

// DeveloperForgedPayload is a refused developer record.
type DeveloperForgedPayload struct {
	Row    string `json:"row"`    // which record ("workspace", "process", "mode", …)
	ID     string `json:"id"`     // which one of them
	Reason string `json:"reason"` // what does not check
	Fix    string `json:"fix"`    // what the owner does about it
}

// ProcessGaveUpPayload is a process stopped after too many crashes.
type ProcessGaveUpPayload struct {
	Agent    string `json:"agent"`    // the workspace's agent
	Name     string `json:"name"`     // the process's name
	Reason   string `json:"reason"`   // how it last ended
	Restarts int    `json:"restarts"` // its restarts inside the budget's window
	Sentence string `json:"sentence"` // what the owner is told
}

// The Telegram surface (surfaces/telegram).
const (
	// TelegramPaired is written when a Telegram user pairs with a one-time code.
	TelegramPaired Kind = "telegram.paired"
	// TelegramIgnored is written when an update gets no answer (a stranger, a group, not a
	// message).
	TelegramIgnored Kind = "telegram.ignored"
	// TelegramDown is written when Telegram refuses the bot token (401): the surface is down
	// until the owner sets a new one.
	TelegramDown Kind = "telegram.down"
	// TelegramForged is written, once per process and row, when a Telegram record does not
	// check under buddi's seal: it is not honoured.
	TelegramForged Kind = "telegram.forged"
)

// TelegramPairedPayload is a new paired identity.
type TelegramPairedPayload struct {
	UserID int64 `json:"user_id"` // the Telegram user's id
	ChatID int64 `json:"chat_id"` // their private chat's id
}

// TelegramIgnoredPayload is an update set aside.
type TelegramIgnoredPayload struct {
	UpdateID int64  `json:"update_id"` // the update
	Why      string `json:"why"`       // why it gets no answer
	UserID   int64  `json:"user_id"`   // the sender, or 0 when there is none
}

// TelegramDownPayload says why the surface is down.
type TelegramDownPayload struct {
	Reason string `json:"reason"` // what Telegram refused
}

// TelegramForgedPayload is a refused Telegram record.
type TelegramForgedPayload struct {
	Row string `json:"row"` // which record ("bot", "pairing code", "paired identity", "update")
	// ID says which one: a number for a paired identity or an update, a text for the bot's
	// name or a code's hash.
	ID     any    `json:"id"`
	Reason string `json:"reason"` // what does not check
	Fix    string `json:"fix"`    // what the owner does about it
}

// The dashboard (surfaces/dashboard).
const (
	// DashboardRefused is written, at most once a minute for each reason and local account,
	// when a request without the owner's credential is refused.
	DashboardRefused Kind = "dashboard.refused"
)

// DashboardRefusedPayload is a refused request.
type DashboardRefusedPayload struct {
	Method string `json:"method"`        // the request's method
	Path   string `json:"path"`          // the request's path
	Reason string `json:"reason"`        // why it was refused
	Remote string `json:"remote"`        // the remote address
	UID    *int   `json:"uid,omitempty"` // the local account that connected on loopback; omitted when unknown
}

// The tailnet (tailnet).
const (
	// TailnetEnabled is written when the owner turns the tailnet on for the next start.
	TailnetEnabled Kind = "tailnet.enabled"
	// TailnetDisabled is written when the owner turns the tailnet off.
	TailnetDisabled Kind = "tailnet.disabled"
	// TailnetOwnerSet is written when the owner's tailnet login is set by command, or pinned
	// by the first login to redeem a sign-in ticket.
	TailnetOwnerSet Kind = "tailnet.owner_set"
	// TailnetRefused is written, at most once per quiet period for each caller and reason,
	// when a tailnet request is refused.
	TailnetRefused Kind = "tailnet.refused"
	// TailnetForged is written, once per process and login, when the stored owner login does
	// not check under buddi's seal.
	TailnetForged Kind = "tailnet.forged"
)

// TailnetOwnerSetPayload is the owner's tailnet login.
type TailnetOwnerSetPayload struct {
	Login string `json:"login"` // the login
	How   string `json:"how"`   // "command" or "ticket"
}

// TailnetRefusedPayload is a refused tailnet request.
type TailnetRefusedPayload struct {
	Login   string `json:"login"`           // the caller's login
	Node    string `json:"node"`            // the caller's machine
	Reason  string `json:"reason"`          // why it was refused
	Surface string `json:"surface"`         // the surface asked for
	Path    string `json:"path"`            // the request's path
	Remote  string `json:"remote"`          // the remote address
	Host    string `json:"host"`            // the Host header
	Error   string `json:"error,omitempty"` // an error that decided it; omitted when none
}

// TailnetForgedPayload is a refused owner login.
type TailnetForgedPayload struct {
	Row    string `json:"row"`    // "owner login"
	Login  string `json:"login"`  // the refused login
	Reason string `json:"reason"` // what does not check
	Fix    string `json:"fix"`    // what the owner does about it
}

// buddi itself, its supervision tree and its queue (app, queue).
const (
	// BuddiStarted is written when buddi serve is ready: the tree started and the queue
	// runs.
	BuddiStarted Kind = "buddi.started"
	// BuddiStopping is written (through the recorder) when buddi serve is asked to stop.
	BuddiStopping Kind = "buddi.stopping"
	// SupervisorRestarted is written (through the recorder) when a supervisor restarted a
	// failed child (actors.EventRestarted).
	SupervisorRestarted Kind = "supervisor.restarted"
	// SupervisorStopped is written (through the recorder) when a failed child was stopped: its
	// restart budget ran out (escalated) or buddi is stopping (actors.EventStopped).
	SupervisorStopped Kind = "supervisor.stopped"
	// WorkPaused is written when the owner pauses all work (buddi pause).
	WorkPaused Kind = "work.paused"
	// WorkResumed is written when the owner resumes work.
	WorkResumed Kind = "work.resumed"
	// QueueProbed is written by the queue's probe job, in the transaction that completes it.
	QueueProbed Kind = "queue.probed"
	// IncidentOpened is written when jobs start dying (discarded) and no incident is open.
	IncidentOpened Kind = "incident.opened"
	// IncidentReported is written once per incident when its window has passed: the owner
	// is told what was lost.
	IncidentReported Kind = "incident.reported"
	// IncidentClosed is written when no job has died for the incident gap.
	IncidentClosed Kind = "incident.closed"

	// OwnerNotified is written by notifyOwner (core/notify) with the row of what buddi told
	// the owner unasked, where it went, in the transaction that writes the row.
	OwnerNotified Kind = "owner.notified"
)

// BuddiStartedPayload describes the serving buddi.
type BuddiStartedPayload struct {
	Version   string `json:"version"`    // buddi's version
	PID       int    `json:"pid"`        // the process id
	Database  string `json:"database"`   // "embedded" or "url"
	Listener  string `json:"listener"`   // the dashboard's address
	StartupMS int64  `json:"startup_ms"` // milliseconds from start to ready
}

// BuddiStoppingPayload says why buddi stops.
type BuddiStoppingPayload struct {
	Reason string `json:"reason"` // "signal"
}

// SupervisorPayload is one supervisor decision (actors.SupervisorEvent).
type SupervisorPayload struct {
	Supervisor string `json:"supervisor"` // the deciding supervisor's path; empty when the system stopped a top-level one
	Child      string `json:"child"`      // the failed child's path
	Reason     string `json:"reason"`     // the panic value or error
	Restarts   int    `json:"restarts"`   // the child's restarts inside the budget's window
	Escalated  bool   `json:"escalated"`  // the budget ran out and the failure went up
}

// QueueProbedPayload is a probe job's work.
type QueueProbedPayload struct {
	JobID int64  `json:"job_id"` // the job
	Note  string `json:"note"`   // the probe's note
}

// IncidentOpenedPayload opens an incident.
type IncidentOpenedPayload struct {
	FirstDeath time.Time `json:"first_death"` // when the first job died
	Jobs       int       `json:"jobs"`        // jobs dead so far
}

// IncidentReportedPayload is what the owner is told of an incident.
type IncidentReportedPayload struct {
	Message string   `json:"message"` // the owner's message (the dashboard shows it)
	Jobs    int      `json:"jobs"`    // jobs dead in it
	Lost    []string `json:"lost"`    // what was lost, by kind of work
}

// IncidentClosedPayload closes an incident.
type IncidentClosedPayload struct {
	After string `json:"after"` // the quiet gap that closed it, as a Go duration
}

// OwnerNotifiedPayload is a notification to the owner and where it was routed.
type OwnerNotifiedPayload struct {
	ID      int64    `json:"id"`      // the core.owner_notifications row
	Kind    string   `json:"kind"`    // what it is about (mission.report, incident, …)
	Urgency string   `json:"urgency"` // urgent, normal or info
	Routes  []string `json:"routes"`  // where it goes: dashboard, telegram, digest
}
