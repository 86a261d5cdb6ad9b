package developer

import (
	"context"
	"fmt"

	"buddi/plugins/developer/confine"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

// space is an agent's workspace as one call sees it: the record, its confinement and the
// mode, all read afresh for the call (§3: "The mode is read from the record on every call").
type space struct {
	ws   Workspace
	root *confine.Root
	mode runlist.Mode
}

// space loads agent's workspace and mode. An agent with no workspace, or whose directory
// is gone or has become protected, is a refusal naming the rule (§3: "no workspace for
// this agent … gated, with the reason naming the rule"); a database fault is an error.
func (p *plugin) space(ctx context.Context, agent string) (*space, error) {
	if p.deps.Pool == nil {
		return nil, errNoDatabase
	}
	if agent == "" {
		return nil, refusef("The call names no agent, and a workspace belongs to an agent.")
	}
	ws, ok, err := p.store.Workspace(ctx, agent)
	if err != nil {
		return nil, err
	}
	if !ok && ws.Refused != "" {
		return nil, refusef("Agent %q has no workspace: the one on record (%s) is refused, because %s. The owner sets it again through developer.workspace or `buddi developer workspace set`.", agent, ws.Directory, ws.Refused)
	}
	if !ok {
		return nil, refusef("Agent %q has no workspace, and the developer tools work only inside one: the owner grants it through developer.workspace.", agent)
	}
	root, err := p.deps.Root(ws.Directory)
	if err != nil {
		// Gone, no longer a directory, or protected since: the record stands, unusable.
		return nil, refusef("The workspace %s cannot be used: %v", ws.Directory, err)
	}
	mode, err := p.store.Mode(ctx, agent)
	if err != nil {
		return nil, err
	}
	return &space{ws: ws, root: root, mode: mode}, nil
}

// resolve validates path (relative to the workspace, or absolute inside it) through the
// confinement: outside, through a link, under a protected path, or through a file is a
// refusal.
func (s *space) resolve(path string) (confine.Path, error) {
	p, err := s.root.Resolve("", path)
	if err != nil {
		if isRefusal(err) {
			return p, err
		}
		return p, fmt.Errorf("developer: resolve %q: %w", path, err)
	}
	return p, nil
}

// dir is the workspace directory as the results name it.
func (s *space) dir() string { return s.root.Dir() }

// env is the environment commands in this workspace get: the plugin's, with the PATH
// captured when the workspace was set (§11), when one was.
func (s *space) env(owner spawn.Owner) []string {
	if s.ws.Path != "" {
		owner.Path = s.ws.Path
	}
	return spawn.Env(owner)
}
