package events

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// wire is every kind's JSON names, as stored rows and their readers (the dashboard, the CLI,
// doctor, tests, SQL over payload) know them. A name changes only with a migration of the
// stored rows and every reader; this table is the check that none changed by accident.
var wire = map[Kind]string{
	RunStarted:    "run_id conversation_id agent account model wire surface interactive delegated_by depth chain asked_in asked_run origin",
	RunStep:       "run_id stop_reason input_tokens output_tokens attempts delivered_input",
	RunToolIntent: "run_id call_id tool",
	RunSuspended:  "run_id action_id",
	RunFinished:   "run_id next_run",
	RunFailed:     "run_id class sentence retry cause",
	RunRecovered:  "run_id dead_job dead_jobs",

	ConversationStarted: "agent surface",
	ConversationEnded:   "reason pending_approvals",
	MessageReceived:     "run_id surface agent",
	MessageJoined:       "run_id surface",

	ToolCalled:  "tool agent run_id call_id tier reason",
	ToolRefused: "tool agent run_id code reason",
	ToolResult:  "tool agent run_id call_id status is_error action_id error",

	ActionProposed:  "action_id tool version agent run_id hash summary reason",
	ActionApproved:  "action_id from reason",
	ActionExecuting: "action_id from reason",
	ActionSucceeded: "action_id from reason",
	ActionFailed:    "action_id from reason",
	ActionExpired:   "action_id from reason",
	ActionRefused:   "action_id from reason",
	ActionUnknown:   "action_id from attempt tool run_id call_id reason",
	ActionForged:    "action_id tool agent reason",

	ApprovalApproved: "action_id tool surface picks reason",
	ApprovalRejected: "action_id tool surface picks reason",
	ApprovalExpired:  "action_id reason",

	PermissionGranted: "id agent tool tool_version conversation_id granted_by granted_at",
	PermissionRevoked: "id surface",

	AccountAdded:    "name wire kind base_url secret_name replaced_unsealed",
	AccountEnabled:  "name",
	AccountDisabled: "name",
	AccountRemoved:  "name",
	AccountForged:   "row name reason fix",
	AgentAccountSet: "agent account model set_at",

	MissionAdded:       "mission_id agent cron timezone",
	MissionEnabled:     "mission_id",
	MissionDisabled:    "mission_id",
	MissionStarted:     "mission_id occurrence_id instant run_id",
	MissionReported:    "mission_id occurrence_id run_id reason report",
	MissionSilent:      "mission_id occurrence_id run_id reason",
	MissionStillUseful: "mission_id quiet_runs owner_line",
	MissionEnded:       "mission_id by ends_on",
	ReminderExpired:    "reminder_id grace",

	SentinelFinding: "sentinel key severity owner_line",
	SentinelFailed:  "sentinel error",
	SentinelWoke:    "runs",

	DeveloperProcessStopped: "agent name reason",
	DeveloperForged:         "row id reason fix",
	ProcessGaveUp:           "agent name reason restarts sentence",

	TelegramPaired:  "user_id chat_id",
	TelegramIgnored: "update_id why user_id",
	TelegramDown:    "reason",
	TelegramForged:  "row id reason fix",

	DashboardRefused: "method path reason remote uid",

	TailnetEnabled:  "",
	TailnetDisabled: "",
	TailnetOwnerSet: "login how",
	TailnetRefused:  "login node reason surface path remote host error",
	TailnetForged:   "row login reason fix",

	BuddiStarted:        "version pid database listener startup_ms",
	BuddiStopping:       "reason",
	SupervisorRestarted: "supervisor child reason restarts escalated",
	SupervisorStopped:   "supervisor child reason restarts escalated",
	WorkPaused:          "",
	WorkResumed:         "",
	QueueProbed:         "job_id note",
	IncidentOpened:      "first_death jobs",
	IncidentReported:    "message jobs lost",
	IncidentClosed:      "after",
	OwnerNotified:       "id kind urgency routes",
}

// TestWireNamesAreTheStoredOnes fails when a payload, every field filled, writes other JSON
// names than its kind's stored rows have.
func TestWireNamesAreTheStoredOnes(t *testing.T) {
	for k, p := range Payloads {
		want, ok := wire[k]
		if !ok {
			t.Errorf("%s: no wire names in the table; add them as the payload writes them", k)
			continue
		}
		v := reflect.New(reflect.TypeOf(p)).Elem()
		fill(v)
		b, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %s is not a JSON object: %v", k, b, err)
		}
		var got []string
		for name := range obj {
			got = append(got, name)
		}
		slices.Sort(got)
		wantNames := strings.Fields(want)
		slices.Sort(wantNames)
		if !slices.Equal(got, wantNames) {
			t.Errorf("%s writes %v, stored rows have %v", k, got, wantNames)
		}
	}
}

// fill sets every field of v to a value that is not its zero, so that no field is omitted.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(key)
		fill(val)
		m.SetMapIndex(key, val)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	default:
		panic("fill: no value for " + v.Type().String())
	}
}
