package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/confine"
)

// This file is what developer.write and developer.edit share (§4): the assessment of a
// write, the file as it was, the card with its diff and the hash of what the diff was
// computed against, and the write itself, atomic through the confinement.

// The bounds of a write or an edit.
const (
	// maxChangeFile is the largest file a write may replace or an edit may change: it is
	// read whole, to be diffed and hashed.
	maxChangeFile = 4 << 20
	// maxWriteContent bounds developer.write's content, in characters (the schema) and in
	// bytes (checked).
	maxWriteContent = 1 << 20
)

// policyLookup bounds PolicyFacts' read of the agent's workspace.
const policyLookup = 5 * time.Second

// preconditionBefore names the hash of the file a card's diff was computed against.
const preconditionBefore = "file content before the change"

// change is one write or edit, prepared: the workspace, the validated path, how the call
// is treated, and the file before and after.
type change struct {
	tool    string
	verb    string // "Write" or "Edit"
	s       *space
	path    confine.Path
	assess  assessment
	before  []byte
	existed bool
	after   []byte
	note    string // what the edit did ("replaced 2 occurrences"), for the result
}

// prepareChange reads the agent's workspace, validates path and decides the tier.
func (p *plugin) prepareChange(ctx context.Context, call plugins.Call, path string) (*change, error) {
	s, err := p.space(ctx, call.Agent)
	if err != nil {
		return nil, err
	}
	// Where git runs hooks from is never written, as .git is not: the confinement asks the
	// owner's git, and refuses the write itself too.
	s.root = s.root.WithHooks(p.hooksLookup(s))
	cp, err := s.resolve(path)
	if err != nil {
		return nil, err
	}
	a, err := writeAssessment(s.root, cp, s.mode)
	if err != nil {
		return nil, err
	}
	return &change{tool: call.Tool, s: s, path: cp, assess: a}, nil
}

// readBefore reads the file as it is now, through the confinement, bounded by
// maxChangeFile; a file that does not exist yet reads as absent.
func (c *change) readBefore() error {
	if !c.path.Exists {
		return nil
	}
	f, p, err := c.s.root.Open("", c.path.Rel)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxChangeFile+1))
	if err != nil {
		return fmt.Errorf("developer: read %s: %w", p.Rel, err)
	}
	if len(data) > maxChangeFile {
		return refusef("%s is larger than %s; a write or an edit reads the file whole, to show the change and its hash, and is bounded there.",
			p.Abs, humanBytes(maxChangeFile))
	}
	c.before, c.existed = data, true
	return nil
}

// envelope is the card: the change as a diff, the hash of what it was computed against
// (also a precondition), and the rule that decided the tier.
func (c *change) envelope() plugins.Envelope {
	ops := lineDiff(splitLines(string(c.before)), splitLines(string(c.after)))
	st := stat(ops)
	base := contentHash(c.before, c.existed)
	var b strings.Builder
	what := "replaces"
	if !c.existed {
		what = "creates"
	}
	fmt.Fprintf(&b, "%s %s in the workspace %s: %s the file, +%d −%d lines (%s after).\n",
		c.verb, c.path.Rel, c.s.dir(), what, st.added, st.removed, humanBytes(int64(len(c.after))))
	if c.existed {
		fmt.Fprintf(&b, "The diff was computed against the file as it was, %s; if it changes before this runs, nothing is written.\n", base)
	} else {
		b.WriteString("The file does not exist yet; if it appears before this runs, nothing is written.\n")
	}
	fmt.Fprintf(&b, "Rule: %s\n\n", c.assess.reason)
	if len(ops) > 0 && st.added+st.removed > 0 {
		b.WriteString(unified(c.path.Rel, ops))
	} else {
		b.WriteString("(no change to the content)")
	}
	return plugins.Envelope{
		Summary: fmt.Sprintf("%s %s in %s", c.verb, c.path.Rel, c.s.dir()),
		Effects: []plugins.Effect{plugins.EffectFSWrite},
		Targets: []string{c.path.Abs},
		Detail: map[string]any{
			"workspace": c.s.dir(),
			"path":      c.path.Rel,
			"created":   !c.existed,
			"before":    base,
			"after":     contentHash(c.after, true),
			"added":     st.added,
			"removed":   st.removed,
			"bytes":     len(c.after),
			"reason":    c.assess.reason,
		},
		Preview:       b.String(),
		Preconditions: []plugins.Precondition{{What: preconditionBefore, Value: base}},
	}
}

// admit decides whether the change may be written now. A call the rules gate runs only
// with an approved card, and then only when the file is still what the card's diff was
// computed against (§4: "a file that moved while the owner was deciding is a refusal
// rather than a different change"). It needs c.before, read afresh for this execution.
func (c *change) admit(approved *plugins.Envelope) error {
	if approved == nil && c.assess.tier != plugins.TierAuto {
		return refusef(reasonNeedApproval, c.tool, strings.TrimSuffix(c.assess.reason, "."))
	}
	if approved != nil {
		want, ok := precondition(approved, preconditionBefore)
		if !ok {
			return refusef("The approved card for %s carries no hash of the file its change was computed against, so nothing was written.", c.path.Abs)
		}
		if now := contentHash(c.before, c.existed); want != now {
			return refusef("%s changed since the card was shown (the card's diff was computed against %s; it is now %s), so nothing was written. Read it again and propose the change anew.",
				c.path.Abs, shortHash(want), shortHash(now))
		}
	}
	return nil
}

// write writes c.after, atomically through the confinement: a temporary file in the same
// directory, renamed over the target; .git is never written. What is left is the window
// between admit's read and the rename, in which another writer's change to the same file
// would be replaced (confine checks the file's identity, not its content).
func (c *change) write(ctx context.Context) (plugins.Result, error) {
	if err := ctx.Err(); err != nil {
		return plugins.Result{}, err
	}
	w, err := c.s.root.Write("", c.path.Rel, c.after)
	if err != nil {
		return toolResult(err)
	}
	st := stat(lineDiff(splitLines(string(c.before)), splitLines(string(c.after))))
	how := "replaced"
	if w.Created {
		how = "created"
	}
	text := fmt.Sprintf("%s %s (%s, %s, %s): +%d −%d lines.", pastTense(c.verb), w.Abs, how,
		plural(len(splitLines(string(c.after))), "line", "lines"), humanBytes(int64(len(c.after))), st.added, st.removed)
	if c.note != "" {
		text += " " + c.note
	}
	data, _ := json.Marshal(map[string]any{
		"path": w.Abs, "created": w.Created, "added": st.added, "removed": st.removed,
		"after": contentHash(c.after, true),
	})
	return plugins.Result{Text: text, Data: data}, nil
}

// pastTense is the result's verb.
func pastTense(verb string) string {
	if verb == "Write" {
		return "Wrote"
	}
	return verb + "ed"
}

// policyFacts are what the permission engine sees of a write or an edit: an edit, of the
// absolute target. The target is the lexical join of the workspace and the path (the
// engine follows links itself); an agent with no workspace shows the path as given, which
// the engine never finds inside a workspace.
func (p *plugin) policyFacts(call plugins.Call, path string) plugins.PolicyFacts {
	facts := plugins.PolicyFacts{Edit: true, Paths: []string{path}}
	if filepath.IsAbs(path) {
		facts.Paths = []string{filepath.Clean(path)}
		return facts
	}
	if p.deps.Pool == nil || call.Agent == "" {
		return facts
	}
	ctx, cancel := context.WithTimeout(context.Background(), policyLookup)
	defer cancel()
	ws, ok, err := p.store.Workspace(ctx, call.Agent)
	if err != nil || !ok {
		return facts
	}
	facts.Paths = []string{filepath.Join(ws.Directory, path)}
	return facts
}
