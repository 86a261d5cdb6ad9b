package registry

import (
	"fmt"
	"time"

	"buddi/plugins"
)

// sessionFailures lists, in plain words, each condition of the session tier that call does
// not meet at now: a live owner request, the tool in the agent's grant, a named agent, a
// conversation, and a run that is not delegated. Seed 000 (§3) lists the five; an empty list
// means the call may act at the session tier.
func sessionFailures(call plugins.Call, now time.Time) []string {
	var failed []string
	switch {
	case call.Owner == nil:
		failed = append(failed, "there is no owner request behind it")
	case !call.Owner.Live(now):
		failed = append(failed, fmt.Sprintf("the owner request expired at %s", call.Owner.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	if !call.Granted {
		failed = append(failed, "the tool is not in the agent's grant")
	}
	if call.Agent == "" {
		failed = append(failed, "it names no agent")
	}
	if call.ConversationID == "" {
		failed = append(failed, "it belongs to no conversation")
	}
	if call.DelegationDepth != 0 {
		failed = append(failed, fmt.Sprintf("it comes from a delegated run (depth %d)", call.DelegationDepth))
	}
	return failed
}
