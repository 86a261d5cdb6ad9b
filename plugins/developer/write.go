package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"buddi/plugins"
)

// writeTool is developer.write (§4): it creates or replaces one file, creating its parents.
type writeTool struct{ p *plugin }

var (
	_ plugins.Tool            = (*writeTool)(nil)
	_ plugins.TierNarrower    = (*writeTool)(nil)
	_ plugins.PolicyDescriber = (*writeTool)(nil)
)

// Spec declares developer.write.
func (t *writeTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".write",
		Description: fmt.Sprintf("Create or replace a file of your workspace with content (at most %d KB), creating its parent directories. "+
			"Paths are relative to the workspace. .git is never written; .gitmodules and .gitattributes always ask the owner; in ask mode every write does.", maxWriteContent>>10),
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"path":    {"type": "string", "minLength": 1, "maxLength": 4096, "description": "The file, relative to the workspace."},
				"content": {"type": "string", "maxLength": %d, "description": "The file's whole new content."}
			},
			"required": ["path", "content"],
			"additionalProperties": false
		}`, maxWriteContent)),
		Effects: []plugins.Effect{plugins.EffectFSWrite},
		Tier:    plugins.TierSession,
		Timeout: 30 * time.Second,
	}
}

// writeArgs are developer.write's arguments.
type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// prepare reads the arguments and the workspace, validates the path and decides the tier;
// with full, it also reads the file as it is and sets what it becomes.
func (t *writeTool) prepare(ctx context.Context, call plugins.Call, full bool) (*change, error) {
	var args writeArgs
	if err := decodeArgs(call.Args, &args); err != nil {
		return nil, err
	}
	if len(args.Content) > maxWriteContent {
		return nil, refusef("The content is %s; one write takes at most %s.", humanBytes(int64(len(args.Content))), humanBytes(maxWriteContent))
	}
	c, err := t.p.prepareChange(ctx, call, args.Path)
	if err != nil {
		return nil, err
	}
	c.verb = "Write"
	if full {
		if err := c.readBefore(); err != nil {
			return nil, err
		}
		c.after = []byte(args.Content)
	}
	return c, nil
}

// TierFor narrows by the mode, read on every call (§3, §4): gated in ask mode, auto in
// edit and run; .gitmodules and .gitattributes gated in every mode; a path that is refused
// (outside, a link, protected, .git) gated, for Describe to refuse.
func (t *writeTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	c, err := t.prepare(ctx, call, false)
	if err != nil {
		return tierOf(assessment{}, err)
	}
	return tierOf(c.assess, nil)
}

// Describe renders the card: the diff against the file as it is, with its hash.
func (t *writeTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	c, err := t.prepare(ctx, call, true)
	if err != nil {
		return plugins.Envelope{}, err
	}
	return c.envelope(), nil
}

// Execute writes the file.
func (t *writeTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	c, err := t.prepare(ctx, call, true)
	if err != nil {
		return toolResult(err)
	}
	if err := c.admit(approved); err != nil {
		return toolResult(err)
	}
	return c.write(ctx)
}

// PolicyFacts shows the permission engine an edit of the absolute target.
func (t *writeTool) PolicyFacts(call plugins.Call) plugins.PolicyFacts {
	var args writeArgs
	_ = json.Unmarshal(call.Args, &args)
	return t.p.policyFacts(call, args.Path)
}
