package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/runlist"
	"buddi/plugins/developer/spawn"
)

// gitTool is developer.git (§4): the listed actions only, with git's own configuration,
// hooks, pagers, signing and external drivers switched off, only at the repository's root.
type gitTool struct{ p *plugin }

var (
	_ plugins.Tool         = (*gitTool)(nil)
	_ plugins.TierNarrower = (*gitTool)(nil)
)

// Spec declares developer.git.
func (t *gitTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".git",
		Description: "Use git in your workspace: status, diff, log, branch (list, or create one with name), commit (message; stages everything first), stash (push or list), init. " +
			"push, reset, checkout of another branch, merges and history rewrites are not offered.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"action":  {"type": "string", "enum": ["status", "diff", "log", "branch", "commit", "stash", "init"]},
				"name":    {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$", "description": "branch: the new branch's name."},
				"message": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "commit: the message."},
				"stash":   {"type": "string", "enum": ["push", "list"], "description": "stash: push (default) or list."},
				"staged":  {"type": "boolean", "description": "diff: the staged changes."},
				"count":   {"type": "integer", "minimum": 1, "maximum": 200, "description": "log: how many commits (default 20)."}
			},
			"required": ["action"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectRead, plugins.EffectFSWrite, plugins.EffectExec},
		Tier:    plugins.TierSession,
		Timeout: 2 * time.Minute,
	}
}

// gitArgs are developer.git's arguments.
type gitArgs struct {
	Action  string `json:"action"`
	Name    string `json:"name"`
	Message string `json:"message"`
	Stash   string `json:"stash"`
	Staged  bool   `json:"staged"`
	Count   int    `json:"count"`
}

// gitCall is one call, prepared: the workspace, the argv and its assessment.
type gitCall struct {
	args gitArgs
	s    *space
	argv []string
	a    assessment
}

// prepare checks the workspace is a repository's root (init: that it is in none) and
// decides the tier per §4.
func (t *gitTool) prepare(ctx context.Context, call plugins.Call) (*gitCall, error) {
	c := &gitCall{}
	if err := decodeArgs(call.Args, &c.args); err != nil {
		return nil, err
	}
	var err error
	if c.s, err = t.p.space(ctx, call.Agent); err != nil {
		return nil, err
	}
	repo, err := c.s.root.IsRepository()
	if err != nil {
		return nil, err
	}
	if c.args.Action == "init" {
		enclosing, err := c.s.root.EnclosingRepository()
		if err != nil {
			return nil, err
		}
		if repo || enclosing != "" {
			return nil, refusef("The workspace is already inside a repository; git init is refused there (a nested repository is the confusion the root check exists for).")
		}
		c.argv = []string{"init", "--quiet"}
		c.a = assessment{tier: plugins.TierGated, reason: "git init is gated in every mode."}
		return c, nil
	}
	if !repo {
		return nil, refusef("git runs only when the workspace is the repository's root, and %s is not one: otherwise a pathspec would reach the owner's other work.", c.s.dir())
	}
	mode := c.s.mode
	switch c.args.Action {
	case "status":
		c.argv = []string{"status", "--short", "--branch", "--untracked-files=normal"}
		c.a = assessment{tier: plugins.TierAuto, reason: "Reading git needs no card."}
	case "diff":
		c.argv = []string{"diff", "--no-ext-diff", "--no-textconv", "--stat", "--patch"}
		if c.args.Staged {
			c.argv = append(c.argv, "--cached")
		}
		c.argv = append(c.argv, "--", ".")
		c.a = assessment{tier: plugins.TierAuto, reason: "Reading git needs no card."}
	case "log":
		n := c.args.Count
		if n == 0 {
			n = 20
		}
		c.argv = []string{"log", "--no-show-signature", "--no-ext-diff", "--no-textconv", fmt.Sprintf("--max-count=%d", n), "--format=%h %ad %an: %s", "--date=short"}
		c.a = assessment{tier: plugins.TierAuto, reason: "Reading git needs no card."}
	case "branch":
		if c.args.Name == "" {
			c.argv = []string{"branch", "--list", "--no-color"}
			c.a = assessment{tier: plugins.TierAuto, reason: "Listing branches needs no card."}
			break
		}
		if strings.Contains(c.args.Name, "..") || strings.HasPrefix(c.args.Name, "-") {
			return nil, refusef("%q is not a branch name git accepts.", c.args.Name)
		}
		c.argv = []string{"switch", "--quiet", "-c", c.args.Name, "HEAD"}
		if mode == runlist.ModeAsk {
			c.a = assessment{tier: plugins.TierGated, reason: "Ask mode gates creating a branch."}
		} else {
			c.a = assessment{tier: plugins.TierAuto, reason: "Creating a branch moves a ref and leaves the working tree alone."}
		}
	case "commit":
		if c.args.Message == "" {
			return nil, refusef("A commit needs a message.")
		}
		c.argv = []string{"commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", c.args.Message}
		if mode == runlist.ModeRun {
			c.a = assessment{tier: plugins.TierAuto, reason: "Run mode commits without a card: the repository's own clean filters run, as its scripts do."}
		} else {
			c.a = assessment{tier: plugins.TierGated, reason: "A commit runs the repository's own clean filters (code in files an agent can write), so it is gated outside run mode."}
		}
	case "stash":
		if c.args.Stash == "list" {
			c.argv = []string{"stash", "list"}
			c.a = assessment{tier: plugins.TierAuto, reason: "Listing stashes needs no card."}
			break
		}
		c.argv = []string{"stash", "push", "--quiet", "--include-untracked"}
		if mode == runlist.ModeAsk {
			c.a = assessment{tier: plugins.TierGated, reason: "Ask mode gates changing the working tree."}
		} else {
			c.a = assessment{tier: plugins.TierAuto, reason: fmt.Sprintf("%s mode lets a stash through without a card.", titleMode(mode))}
		}
	default:
		return nil, refusef("git %s is not offered.", c.args.Action)
	}
	return c, nil
}

// TierFor is the action's tier in the agent's mode (§4).
func (t *gitTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return tierOf(assessment{}, err)
	}
	return c.a.tier
}

// Describe renders the git command and the rule.
func (t *gitTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	effects := []plugins.Effect{plugins.EffectRead}
	if c.a.tier == plugins.TierGated || c.args.Action == "commit" || c.args.Action == "stash" || c.args.Action == "branch" && c.args.Name != "" {
		effects = []plugins.Effect{plugins.EffectFSWrite, plugins.EffectExec}
	}
	return plugins.Envelope{
		Summary: fmt.Sprintf("git %s in %s", strings.Join(c.argv, " "), c.s.dir()),
		Effects: effects,
		Targets: []string{c.s.dir()},
		Detail:  map[string]any{"action": c.args.Action, "argv": c.argv, "dir": c.s.dir()},
		Preview: fmt.Sprintf("git %s\nin %s (git's own configuration, hooks, pager and signing off)\nRule: %s", quoteArgv(c.argv), c.s.dir(), c.a.reason),
	}, nil
}

// Execute runs git with the hardened configuration, from the git binary on PATH.
func (t *gitTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return toolResult(err)
	}
	if c.a.tier != plugins.TierAuto && approved == nil {
		return toolResult(refusef(reasonNeedApproval, Name+".git", c.a.reason))
	}
	hooks := t.hooksDir()
	if err := os.MkdirAll(hooks, 0o700); err != nil {
		return plugins.Result{}, fmt.Errorf("developer: empty hooks directory: %w", err)
	}
	argv := append([]string{"git", "-c", "core.hooksPath=" + hooks, "-c", "core.pager=cat", "-c", "core.sshCommand=false",
		"-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false", "-c", "gpg.program=false", "-c", "core.fsmonitor=false",
		"-c", "user.name=buddi developer agent", "-c", "user.email=developer@buddi.invalid"}, c.argv...)
	if c.args.Action == "commit" {
		add := append(argv[:len(argv)-len(c.argv):len(argv)-len(c.argv)], "add", "--all", "--", ".")
		if res, err := t.runGit(ctx, c.s, add); err != nil || res.ExitCode != 0 {
			return gitResult(res, err)
		}
	}
	res, err := t.runGit(ctx, c.s, argv)
	return gitResult(res, err)
}

// runGit spawns git in the workspace with its environment plus git's isolation variables.
func (t *gitTool) runGit(ctx context.Context, s *space, argv []string) (spawn.Result, error) {
	dir := s.dir()
	env := append(s.env(t.p.owner), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat", "GIT_ASKPASS=", "GIT_EDITOR=true", "GIT_OPTIONAL_LOCKS=0")
	return spawn.Run(ctx, spawn.Spec{Argv: argv, Dir: dir, Env: env, Timeout: time.Minute})
}

// gitResult turns a git run into the model's result.
func gitResult(res spawn.Result, err error) (plugins.Result, error) {
	if err != nil {
		return toolResult(refusef("git could not be started: %v", err))
	}
	text := strings.TrimRight(res.Output, "\n")
	if text == "" {
		text = "(no output)"
	}
	return plugins.Result{Text: fmt.Sprintf("$ %s\n(exit %d)\n%s", quoteArgv(res.Argv[len(res.Argv)-min(len(res.Argv), 6):]), res.ExitCode, text), IsError: res.ExitCode != 0}, nil
}

// hooksDir is the empty directory git's core.hooksPath points at: <data>/developer/empty-hooks.
func (t *gitTool) hooksDir() string {
	return filepath.Join(filepath.Dir(t.p.logDir()), "empty-hooks")
}
