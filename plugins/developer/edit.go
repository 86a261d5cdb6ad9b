package developer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"buddi/plugins"
)

// editTool is developer.edit (§4): exact-string replacement in one file, refused when the
// old text is absent or ambiguous.
type editTool struct{ p *plugin }

var (
	_ plugins.Tool            = (*editTool)(nil)
	_ plugins.TierNarrower    = (*editTool)(nil)
	_ plugins.PolicyDescriber = (*editTool)(nil)
)

// Spec declares developer.edit.
func (t *editTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".edit",
		Description: "Replace the exact text old with new in a file of your workspace. old must occur exactly once, unless all is true, " +
			"which replaces every occurrence. .git is never written; .gitmodules and .gitattributes always ask the owner; in ask mode every edit does.",
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"path": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "The file, relative to the workspace."},
				"old":  {"type": "string", "minLength": 1, "maxLength": %d, "description": "The exact text to replace."},
				"new":  {"type": "string", "maxLength": %d, "description": "The text to put in its place."},
				"all":  {"type": "boolean", "description": "Replace every occurrence of old. Default false: old must occur once."}
			},
			"required": ["path", "old", "new"],
			"additionalProperties": false
		}`, maxWriteContent, maxWriteContent)),
		Effects: []plugins.Effect{plugins.EffectFSWrite},
		Tier:    plugins.TierSession,
		Timeout: 30 * time.Second,
	}
}

// editArgs are developer.edit's arguments.
type editArgs struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
	All  bool   `json:"all"`
}

// prepare reads the arguments and the workspace, validates the path and decides the tier;
// with full, it also reads the file as it is.
func (t *editTool) prepare(ctx context.Context, call plugins.Call, full bool) (*change, editArgs, error) {
	var args editArgs
	if err := decodeArgs(call.Args, &args); err != nil {
		return nil, args, err
	}
	if args.Old == args.New {
		return nil, args, refusef("old and new are the same text, so the edit would change nothing.")
	}
	c, err := t.p.prepareChange(ctx, call, args.Path)
	if err != nil {
		return nil, args, err
	}
	c.verb = "Edit"
	if !full {
		return c, args, nil
	}
	if !c.path.Exists {
		return nil, args, refusef("%s does not exist; developer.write creates a file.", c.path.Abs)
	}
	if err := c.readBefore(); err != nil {
		return nil, args, err
	}
	return c, args, nil
}

// replace makes the replacement in c.before, refusing old text that is absent or, without
// all, ambiguous.
func replace(c *change, args editArgs) error {
	old, repl := []byte(args.Old), []byte(args.New)
	switch n := bytes.Count(c.before, old); {
	case n == 0:
		return refusef("The text old does not occur in %s; read the file and give its exact text, whitespace included.", c.path.Abs)
	case n > 1 && !args.All:
		return refusef("The text old occurs %d times in %s, so the edit is ambiguous: give more of the surrounding text, or set all to replace every one.", n, c.path.Abs)
	default:
		c.after = bytes.ReplaceAll(c.before, old, repl)
		c.note = "Replaced " + plural(n, "occurrence", "occurrences") + "."
	}
	if len(c.after) > maxChangeFile {
		return refusef("The edit would make %s %s, past the %s bound of a write.", c.path.Abs, humanBytes(int64(len(c.after))), humanBytes(maxChangeFile))
	}
	return nil
}

// TierFor narrows by the mode, read on every call, as developer.write does.
func (t *editTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	c, _, err := t.prepare(ctx, call, false)
	if err != nil {
		return tierOf(assessment{}, err)
	}
	return tierOf(c.assess, nil)
}

// Describe renders the card: the diff against the file as it is, with its hash.
func (t *editTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	c, args, err := t.prepare(ctx, call, true)
	if err != nil {
		return plugins.Envelope{}, err
	}
	if err := replace(c, args); err != nil {
		return plugins.Envelope{}, err
	}
	return c.envelope(), nil
}

// Execute checks the file is still what an approved card showed, makes the replacement and
// writes the file.
func (t *editTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	c, args, err := t.prepare(ctx, call, true)
	if err != nil {
		return toolResult(err)
	}
	if err := c.admit(approved); err != nil {
		return toolResult(err)
	}
	if err := replace(c, args); err != nil {
		return toolResult(err)
	}
	return c.write(ctx)
}

// PolicyFacts shows the permission engine an edit of the absolute target.
func (t *editTool) PolicyFacts(call plugins.Call) plugins.PolicyFacts {
	var args editArgs
	_ = json.Unmarshal(call.Args, &args)
	return t.p.policyFacts(call, args.Path)
}
