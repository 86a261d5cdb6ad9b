package developer

import (
	"fmt"
	"path"
	"path/filepath"

	"buddi/plugins"
	"buddi/plugins/developer/confine"
	"buddi/plugins/developer/runlist"
)

// assessment is how one call is to be treated and why: the tier TierFor answers and the
// one sentence the card carries (§3: "The reason is one sentence and it is appended to the
// approval's preview, so the card the owner reads says which rule matched").
type assessment struct {
	tier   plugins.Tier
	reason string
}

// tierOf is TierFor's answer for an assessment: a refusal, or any fault, is gated (§3: "no
// workspace for this agent, or a path that resolves outside it: gated"), and Describe then
// refuses the call before a card exists, with the same sentence.
func tierOf(a assessment, err error) plugins.Tier {
	if err != nil || a.tier == "" {
		return plugins.TierGated
	}
	return a.tier
}

// The reasons, one sentence each.
const (
	reasonRead         = "Reads inside the workspace need no card in any mode."
	reasonAskWrite     = "Ask mode gates every write, so the owner sees the change first."
	reasonGitDecides   = "%s is gated in every mode, because it decides what git, or a hook git runs, itself runs."
	reasonWorkspace    = "Setting a workspace is gated in every mode: a directory is the owner's to grant."
	reasonUnknownMode  = "The agent's mode is not one of ask, edit or run, so every write asks."
	reasonNeedApproval = "%s needs the owner's approval for this call (%s), and none was given."
)

// writeAssessment decides a write to p (write or edit) in mode (§3, §4): .git is never
// written, nor is the directory git runs hooks from (core.hooksPath's, .husky: root says
// which); .gitmodules, .gitattributes and the hook managers' files are gated in every mode;
// ask gates every write; edit and run let it through.
func writeAssessment(root *confine.Root, p confine.Path, mode runlist.Mode) (assessment, error) {
	if p.InGit {
		return assessment{}, refusef("%q is inside .git, and .git is never written.", p.Rel)
	}
	dir, in, err := root.InHooks(p)
	switch {
	case err != nil:
		return assessment{}, fmt.Errorf("developer: where git runs hooks from, for %s: %w", p.Rel, err)
	case in:
		return assessment{}, &confine.HooksDirError{Path: p.Rel, Dir: relTo(root.Dir(), dir)}
	case p.Exists && !p.Mode.IsRegular():
		return assessment{}, &confine.NotRegularError{Path: p.Rel, Kind: kindOf(p)}
	case p.NeedsGate:
		return assessment{tier: plugins.TierGated, reason: fmt.Sprintf(reasonGitDecides, path.Base(p.Rel))}, nil
	}
	switch mode {
	case runlist.ModeAsk:
		return assessment{tier: plugins.TierGated, reason: reasonAskWrite}, nil
	case runlist.ModeEdit, runlist.ModeRun:
		return assessment{tier: plugins.TierAuto, reason: fmt.Sprintf("%s mode lets writes inside the workspace through without a card.", titleMode(mode))}, nil
	}
	return assessment{tier: plugins.TierGated, reason: reasonUnknownMode}, nil
}

// relTo names abs relative to dir when it is inside it.
func relTo(dir, abs string) string {
	if r, err := filepath.Rel(dir, abs); err == nil && filepath.IsLocal(r) {
		return r
	}
	return abs
}

// titleMode is the mode's name at the start of a sentence.
func titleMode(m runlist.Mode) string {
	switch m {
	case runlist.ModeAsk:
		return "Ask"
	case runlist.ModeEdit:
		return "Edit"
	case runlist.ModeRun:
		return "Run"
	}
	return string(m)
}

// kindOf names what a path that is not a regular file is.
func kindOf(p confine.Path) string {
	if p.Mode.IsDir() {
		return "a directory"
	}
	return "a special file (a pipe, a socket or a device)"
}
