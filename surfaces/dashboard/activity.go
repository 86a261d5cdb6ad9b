package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"buddi/core/eventlog"
)

// timelineEvent is an event as Activity lists it: the event, its kind in words and the few
// fields of its payload that say what happened, on one line.
type timelineEvent struct {
	eventlog.Event
	Words  string `json:"words"`  // the kind in words ("a turn failed")
	Detail string `json:"detail"` // the fields that matter ("developer · the model refused")
}

// kindWords says what an event kind means; a kind not listed is told by its own name with
// the punctuation taken out.
var kindWords = map[string]string{
	"run.started": "a turn started", "run.step": "the model answered", "run.tool_intent": "a tool is about to run",
	"run.suspended": "a turn waits for you", "run.finished": "a turn finished", "run.failed": "a turn failed",
	"run.recovered":        "a turn was taken up again after a restart",
	"conversation.started": "a conversation started", "conversation.ended": "a conversation ended",
	"message.received": "you wrote", "message.joined": "you added to a running turn",
	"tool.called": "a tool was called", "tool.refused": "a tool was refused", "tool.result": "a tool answered",
	"action.proposed": "an action was proposed", "action.approved": "an action was approved",
	"action.executing": "an action is running", "action.succeeded": "an action succeeded",
	"action.failed": "an action failed", "action.expired": "an action expired", "action.refused": "an action was refused",
	"action.unknown": "an action's outcome is unknown", "action.forged": "a forged action was refused",
	"approval.approved": "you approved", "approval.rejected": "you rejected", "approval.expired": "an approval expired",
	"permission.granted": "a permission was granted", "permission.revoked": "a permission was revoked",
	"account.added": "a model account was added", "account.enabled": "a model account was enabled",
	"account.disabled": "a model account was disabled", "account.removed": "a model account was removed",
	"agent.account_set": "an agent's account was set",
	"mission.added":     "a mission was added", "mission.enabled": "a mission was resumed", "mission.disabled": "a mission was paused",
	"mission.started": "a mission ran", "mission.reported": "a mission reported", "mission.silent": "a mission had nothing to say",
	"mission.still_useful": "a mission asks if it is still useful", "mission.ended": "a mission ended",
	"reminder.expired": "a reminder expired",
	"sentinel.finding": "a sentinel found something", "sentinel.failed": "a sentinel failed", "sentinel.woke": "a sentinel woke",
	"developer.process_stopped": "a process stopped", "process.gave_up": "a process was given up",
	"telegram.paired": "a phone was paired", "telegram.ignored": "Telegram ignored a message", "telegram.down": "Telegram refused the bot",
	"dashboard.refused": "the dashboard refused a request",
	"tailnet.enabled":   "the tailnet was turned on", "tailnet.disabled": "the tailnet was turned off",
	"tailnet.owner_set": "the tailnet's owner was set", "tailnet.refused": "the tailnet refused a request",
	"buddi.started": "buddi started", "buddi.stopping": "buddi is stopping",
	"supervisor.restarted": "a part of buddi was restarted", "supervisor.stopped": "a part of buddi stopped",
	"work.paused": "work was paused", "work.resumed": "work was resumed", "queue.probed": "the queue was checked",
	"incident.opened": "an incident opened", "incident.reported": "an incident was reported", "incident.closed": "an incident closed",
}

// detailFields are the payload fields worth a place on the line, in the order they are told;
// ids, hashes and counters stay in the event's JSON.
var detailFields = []string{
	"agent", "tool", "name", "summary", "sentence", "message", "text", "report", "why", "reason", "error", "cause",
	"fix", "model", "account", "surface", "status", "stop_reason", "cron", "timezone", "login", "severity",
	"restarts", "attempts", "output_tokens",
}

// quietFields are fields left off the line for a kind: the policy's trace of a proposed action
// is for the record, its summary says what it is.
var quietFields = map[string]map[string]bool{"action.proposed": {"reason": true}}

// describe tells one event in words and its detail in at most about 200 characters.
func describe(e eventlog.Event) timelineEvent {
	kind := string(e.Kind)
	words, ok := kindWords[kind]
	if !ok {
		words = strings.NewReplacer(".", " ", "_", " ").Replace(kind)
	}
	var payload map[string]any
	_ = json.Unmarshal(e.Payload, &payload) // not an object: no detail
	var parts []string
	for _, f := range detailFields {
		v, ok := payload[f]
		if !ok || quietFields[kind][f] {
			continue
		}
		var s string
		switch v := v.(type) {
		case string:
			s = strings.Join(strings.Fields(v), " ")
		case float64:
			if v == 0 {
				continue
			}
			s = fmt.Sprintf("%s %g", strings.ReplaceAll(f, "_", " "), v)
		default:
			continue
		}
		if s == "" {
			continue
		}
		parts = append(parts, clip(s, 120))
	}
	return timelineEvent{Event: e, Words: words, Detail: clip(strings.Join(parts, " · "), 200)}
}

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
