package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"buddi/plugins"
)

// summariseTool is developer.summarise (§6): the branch, the diff stat, and the last test
// command with its result, for the owner to review; the diff itself is the unit of review.
type summariseTool struct{ p *plugin }

var (
	_ plugins.Tool         = (*summariseTool)(nil)
	_ plugins.TierNarrower = (*summariseTool)(nil)
)

// Spec declares developer.summarise.
func (t *summariseTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name:        Name + ".summarise",
		Description: "When you are done: the branch, the diff stat and the last test run, for the owner to review.",
		Schema:      json.RawMessage(`{"type": "object", "properties": {}, "additionalProperties": false}`),
		Effects:     []plugins.Effect{plugins.EffectRead},
		Tier:        plugins.TierSession,
		Timeout:     time.Minute,
	}
}

// TierFor: summarising is auto in every mode (§6).
func (t *summariseTool) TierFor(context.Context, plugins.Call) plugins.Tier { return plugins.TierAuto }

// Describe renders what is summarised.
func (t *summariseTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	s, err := t.p.space(ctx, call.Agent)
	if err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Summarise the work in " + s.dir(), Effects: []plugins.Effect{plugins.EffectRead}, Preview: "Summarise the branch, diff stat and last test run in " + s.dir()}, nil
}

// Execute gathers the summary.
func (t *summariseTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	s, err := t.p.space(ctx, call.Agent)
	if err != nil {
		return toolResult(err)
	}
	git := &gitTool{p: t.p}
	summary := map[string]any{"workspace": s.dir()}
	var b strings.Builder
	fmt.Fprintf(&b, "Workspace %s (mode %s)\n", s.dir(), s.mode)
	if repo, _ := s.root.IsRepository(); repo {
		hooks := git.hooksDir()
		base := []string{"git", "-c", "core.hooksPath=" + hooks, "-c", "core.pager=cat", "-c", "core.fsmonitor=false"}
		if res, err := git.runGit(ctx, s, append(base, "rev-parse", "--abbrev-ref", "HEAD")); err == nil && res.ExitCode == 0 {
			branch := strings.TrimSpace(res.Output)
			summary["branch"] = branch
			fmt.Fprintf(&b, "Branch: %s\n", branch)
		}
		if res, err := git.runGit(ctx, s, append(base, "diff", "--no-ext-diff", "--no-textconv", "--stat", "HEAD", "--", ".")); err == nil && res.ExitCode == 0 {
			stat := strings.TrimSpace(res.Output)
			if stat == "" {
				stat = "no changes against HEAD"
			}
			summary["diff_stat"] = stat
			fmt.Fprintf(&b, "Changes against HEAD:\n%s\n", stat)
		}
	} else {
		fmt.Fprintln(&b, "The workspace is not a git repository, so there is no branch or diff to show.")
	}
	if last, ok := t.p.lastTestRun(call.Agent, s.dir()); ok {
		result := fmt.Sprintf("exit %d after %s", last.exitCode, last.elapsed.Round(time.Millisecond))
		if last.measure.Known {
			result += fmt.Sprintf(", %d failing", last.measure.Failing)
		} else {
			result += ", failing tests not measurable (" + last.measure.Reason + ")"
		}
		summary["test_command"], summary["test_result"] = strings.Join(last.argv, " "), result
		fmt.Fprintf(&b, "Last test run: %s — %s\n", quoteArgv(last.argv), result)
	} else {
		fmt.Fprintln(&b, "No test run is recorded for this workspace since buddi started.")
	}
	data, _ := json.Marshal(summary)
	return plugins.Result{Text: b.String(), Data: data}, nil
}
