// Package events is the catalogue of core.events: every kind of fact buddi records in its
// event log, each a constant of type Kind that says when it is written, with the payload
// struct that is marshalled into the row's JSON object. Reading catalog.go lists every event
// and its fields; Payloads pairs each kind with its payload type.
//
// The field names are the stored rows' and the readers' (the dashboard, the CLI, doctor,
// tests): they never change. A new kind is a constant in catalog.go, its payload struct and
// its line in Payloads; eventlog.Append and Recorder.Record take only these constants (a
// repository test refuses anything else). The package imports nothing of buddi, so every
// package may use it.
package events

import "strings"

// Kind names a kind of event: dotted lower-case words, the first naming its family
// ("run.started").
type Kind string

// Family is the kind's first word with its dot ("supervisor." for supervisor.restarted), the
// prefix eventlog.Filter takes to list every kind of that family.
func (k Kind) Family() string {
	family, _, _ := strings.Cut(string(k), ".")
	return family + "."
}

// None is the payload of a kind that carries no fields: it is written as {}.
type None struct{}

// Payloads pairs every kind with the payload type written for it (a zero value of that type).
var Payloads = map[Kind]any{
	RunStarted:          RunStartedPayload{},
	RunStep:             RunStepPayload{},
	RunToolIntent:       RunToolIntentPayload{},
	RunSuspended:        RunSuspendedPayload{},
	RunFinished:         RunFinishedPayload{},
	RunFailed:           RunFailedPayload{},
	RunRecovered:        RunRecoveredPayload{},
	ConversationStarted: ConversationStartedPayload{},
	ConversationEnded:   ConversationEndedPayload{},
	MessageReceived:     MessageReceivedPayload{},
	MessageJoined:       MessageJoinedPayload{},

	ToolCalled:  ToolCalledPayload{},
	ToolRefused: ToolRefusedPayload{},
	ToolResult:  ToolResultPayload{},

	ActionProposed:  ActionProposedPayload{},
	ActionApproved:  ActionMovedPayload{},
	ActionExecuting: ActionMovedPayload{},
	ActionSucceeded: ActionMovedPayload{},
	ActionFailed:    ActionMovedPayload{},
	ActionExpired:   ActionMovedPayload{},
	ActionRefused:   ActionMovedPayload{},
	ActionUnknown:   ActionUnknownPayload{},
	ActionForged:    ActionForgedPayload{},

	ApprovalApproved: ApprovalDecidedPayload{},
	ApprovalRejected: ApprovalDecidedPayload{},
	ApprovalExpired:  ApprovalExpiredPayload{},

	PermissionGranted: PermissionGrantedPayload{},
	PermissionRevoked: PermissionRevokedPayload{},

	AccountAdded:    AccountAddedPayload{},
	AccountEnabled:  AccountSwitchedPayload{},
	AccountDisabled: AccountSwitchedPayload{},
	AccountRemoved:  AccountRemovedPayload{},
	AccountForged:   AccountForgedPayload{},
	AgentAccountSet: AgentAccountSetPayload{},

	MissionAdded:       MissionAddedPayload{},
	MissionEnabled:     MissionSwitchedPayload{},
	MissionDisabled:    MissionSwitchedPayload{},
	MissionStarted:     MissionStartedPayload{},
	MissionReported:    MissionReportedPayload{},
	MissionSilent:      MissionSilentPayload{},
	MissionStillUseful: MissionStillUsefulPayload{},
	MissionEnded:       MissionEndedPayload{},
	ReminderExpired:    ReminderExpiredPayload{},

	SentinelFinding: SentinelFindingPayload{},
	SentinelFailed:  SentinelFailedPayload{},
	SentinelWoke:    SentinelWokePayload{},

	DeveloperProcessStopped: DeveloperProcessStoppedPayload{},
	DeveloperForged:         DeveloperForgedPayload{},
	ProcessGaveUp:           ProcessGaveUpPayload{},

	TelegramPaired:  TelegramPairedPayload{},
	TelegramIgnored: TelegramIgnoredPayload{},
	TelegramDown:    TelegramDownPayload{},
	TelegramForged:  TelegramForgedPayload{},

	DashboardRefused: DashboardRefusedPayload{},

	TailnetEnabled:  None{},
	TailnetDisabled: None{},
	TailnetOwnerSet: TailnetOwnerSetPayload{},
	TailnetRefused:  TailnetRefusedPayload{},
	TailnetForged:   TailnetForgedPayload{},

	BuddiStarted:        BuddiStartedPayload{},
	BuddiStopping:       BuddiStoppingPayload{},
	SupervisorRestarted: SupervisorPayload{},
	SupervisorStopped:   SupervisorPayload{},
	WorkPaused:          None{},
	WorkResumed:         None{},
	QueueProbed:         QueueProbedPayload{},
	IncidentOpened:      IncidentOpenedPayload{},
	IncidentReported:    IncidentReportedPayload{},
	IncidentClosed:      IncidentClosedPayload{},
	OwnerNotified:       OwnerNotifiedPayload{},
}
