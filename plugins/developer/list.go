package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/confine"
)

// The bounds of developer.list.
const (
	// defaultListDepth is how deep a list goes when the call does not say.
	defaultListDepth = 3
	// maxListDepth is the deepest a list may go.
	maxListDepth = 10
	// maxListEntries is the most entries one list shows.
	maxListEntries = 1000
	// maxWalkNames bounds the names one list or search examines (links, ignored and
	// protected names included).
	maxWalkNames = confine.DefaultMaxEntries
)

// listTool is developer.list.
type listTool struct{ p *plugin }

var (
	_ plugins.Tool         = (*listTool)(nil)
	_ plugins.TierNarrower = (*listTool)(nil)
)

// Spec declares developer.list.
func (t *listTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".list",
		Description: fmt.Sprintf("List a directory of your workspace as a tree, leaving out node_modules, .git and what .gitignore ignores. "+
			"Symbolic links are stepped over and counted, never followed. At most %d entries, %d levels deep.", maxListEntries, maxListDepth),
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"path":  {"type": "string", "maxLength": 4096, "description": "The directory, relative to the workspace. Default: the workspace."},
				"depth": {"type": "integer", "minimum": 1, "maximum": %d, "description": "How many levels to list. Default %d."}
			},
			"additionalProperties": false
		}`, maxListDepth, defaultListDepth)),
		Effects: []plugins.Effect{plugins.EffectRead},
		Tier:    plugins.TierSession,
		Timeout: 30 * time.Second,
	}
}

// listArgs are developer.list's arguments.
type listArgs struct {
	Path  string `json:"path"`
	Depth int    `json:"depth"`
}

// listCall is one call, prepared.
type listCall struct {
	args listArgs
	s    *space
	path confine.Path
}

// prepare reads the arguments and the workspace and validates the path.
func (t *listTool) prepare(ctx context.Context, call plugins.Call) (*listCall, error) {
	c := &listCall{}
	if err := decodeArgs(call.Args, &c.args); err != nil {
		return nil, err
	}
	if c.args.Path == "" {
		c.args.Path = "."
	}
	if c.args.Depth <= 0 {
		c.args.Depth = defaultListDepth
	}
	c.args.Depth = min(c.args.Depth, maxListDepth)
	var err error
	if c.s, err = t.p.space(ctx, call.Agent); err != nil {
		return nil, err
	}
	if c.path, err = c.s.resolve(c.args.Path); err != nil {
		return nil, err
	}
	return c, nil
}

// TierFor is auto for a path inside the workspace in every mode, gated otherwise.
func (t *listTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	_, err := t.prepare(ctx, call)
	return tierOf(assessment{tier: plugins.TierAuto, reason: reasonRead}, err)
}

// Describe renders what would be listed.
func (t *listTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	if !c.path.Exists {
		return plugins.Envelope{}, refusef("%q does not exist in the workspace.", c.args.Path)
	}
	return plugins.Envelope{
		Summary: fmt.Sprintf("List %s in %s", c.path.Rel, c.s.dir()),
		Effects: []plugins.Effect{plugins.EffectRead},
		Targets: []string{c.path.Abs},
		Detail:  map[string]any{"workspace": c.s.dir(), "path": c.path.Rel, "depth": c.args.Depth},
		Preview: fmt.Sprintf("List %s in the workspace %s, %d levels deep (at most %d entries).\nRule: %s",
			c.path.Rel, c.s.dir(), c.args.Depth, maxListEntries, reasonRead),
	}, nil
}

// Execute walks the tree and renders it.
func (t *listTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return toolResult(err)
	}
	var (
		lines   []string
		shown   int
		stopped bool
	)
	start, sum, err := walkTree(ctx, c.s.root, c.args.Path, confine.Limits{MaxEntries: maxWalkNames, MaxDepth: c.args.Depth}, func(e confine.Entry) error {
		if shown == maxListEntries {
			stopped = true
			return fs.SkipAll
		}
		shown++
		indent := strings.Repeat("  ", max(e.Depth-1, 0))
		switch {
		case e.IsDir():
			lines = append(lines, indent+e.Name+"/")
		case e.Mode.IsRegular():
			lines = append(lines, fmt.Sprintf("%s%s  (%s)", indent, e.Name, humanBytes(e.Size)))
		default:
			lines = append(lines, indent+e.Name+"  (special file)")
		}
		return nil
	})
	if err != nil {
		return toolResult(err)
	}
	var b strings.Builder
	if start.Mode.IsDir() {
		fmt.Fprintf(&b, "%s (%s, %d levels deep):\n", start.Abs, plural(shown, "entry", "entries"), c.args.Depth)
	} else {
		fmt.Fprintf(&b, "%s is a file:\n", start.Abs)
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if shown == 0 && start.Mode.IsDir() {
		b.WriteString("(nothing to list)\n")
	}
	b.WriteString(walkFooter(sum, stopped, maxListEntries, "entries"))
	data, _ := json.Marshal(map[string]any{
		"path": start.Abs, "entries": shown, "skipped_links": sum.SkippedLinks, "ignored": sum.Ignored,
		"skipped_protected": sum.SkippedProtected, "truncated": stopped || sum.EntryLimitReached,
	})
	return plugins.Result{Text: strings.TrimSuffix(b.String(), "\n"), Data: data}, nil
}

// walkFooter says what a walk stepped over and where its bounds cut it: stopped means the
// tool's own bound of shownMax (of what) was reached.
func walkFooter(sum treeSummary, stopped bool, shownMax int, what string) string {
	var notes []string
	if sum.SkippedLinks > 0 {
		notes = append(notes, fmt.Sprintf("Stepped over %s (links are never followed).", plural(sum.SkippedLinks, "symbolic link", "symbolic links")))
	}
	if sum.Ignored > 0 {
		notes = append(notes, fmt.Sprintf("Left out %s: node_modules, .git and what .gitignore ignores.", plural(sum.Ignored, "entry", "entries")))
	}
	if sum.SkippedProtected > 0 {
		notes = append(notes, fmt.Sprintf("Stepped over %s, which stay refused.", plural(sum.SkippedProtected, "protected path", "protected paths")))
	}
	if sum.Unreadable > 0 {
		notes = append(notes, fmt.Sprintf("%s could not be read.", plural(sum.Unreadable, "directory", "directories")))
	}
	if stopped {
		notes = append(notes, fmt.Sprintf("Stopped at the bound of %d %s.", shownMax, what))
	}
	if sum.EntryLimitReached {
		notes = append(notes, fmt.Sprintf("Stopped at the bound of %d names examined; narrow the path.", sum.Limits.MaxEntries))
	}
	if sum.DepthLimitReached {
		notes = append(notes, fmt.Sprintf("Directories %d levels down were not entered.", sum.Limits.MaxDepth))
	}
	return strings.Join(notes, "\n")
}
