package app

import (
	"context"
	"fmt"
	"strings"

	"buddi/agents"
	"buddi/core/conversation"
	"buddi/plugins"
	"buddi/runtime/run"
	"buddi/sentinels"
)

// sentinelWake is the sentinel-wake mission: urgent findings wake the agent holding the
// overview role, in a conversation of its own, unattended. The findings are evidence, not a
// verdict: it verifies them with its tools, then reports or goes silent.
func sentinelWake(catalog func() (*agents.Catalog, error), convs *conversation.Store, runner *run.Runner) sentinels.Starter {
	return func(ctx context.Context, sentinel string, fs []plugins.Finding, claim conversation.Claim) (string, error) {
		cat, err := catalog()
		if err != nil {
			return "", err
		}
		a, err := cat.ForRole("overview")
		if err != nil {
			return "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "The watcher %s found this. It is evidence, not a verdict: check it with your tools, then report in under 600 characters with one recommended action (mission.report), or stay silent with a reason (mission.silent).\n", sentinel)
		for _, f := range fs {
			fmt.Fprintf(&b, "\n- %s", f.OwnerLine)
			if f.Brief != "" {
				fmt.Fprintf(&b, " (%s)", f.Brief)
			}
		}
		sent, err := convs.StartDetached(ctx, a.ID, b.String(), runner.StartNext(run.Meta{Interactive: false}), claim)
		return sent.RunID, err
	}
}

// allSentinels are the sentinels of every plugin compiled in.
func allSentinels(manifests []plugins.Manifest) []plugins.Sentinel {
	var out []plugins.Sentinel
	for _, m := range manifests {
		out = append(out, m.Sentinels...)
	}
	return out
}
