package developer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/confine"
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
	// ownFilters says the action runs the repository's own filter drivers (commit, stash
	// push: gated outside run mode for it); every other action runs none.
	ownFilters bool
	// box is the sandbox git runs in, .git writable.
	box boxed
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
		c.box = t.p.box(c.s, true)
		return c, nil
	}
	if !repo {
		return nil, refusef("git runs only when the workspace is the repository's root, and %s is not one: otherwise a pathspec would reach the owner's other work.", c.s.dir())
	}
	// A configuration git would take from outside the repository's .git is refused before
	// a card exists for it (Execute reads it again before it runs git).
	g, err := t.hardened(c.s)
	if err != nil {
		return nil, err
	}
	cfg, err := g.config(ctx)
	if err != nil {
		return nil, err
	}
	if err := cfg.fromRepository(c.s.dir()); err != nil {
		return nil, err
	}
	mode := c.s.mode
	switch c.args.Action {
	case "status":
		c.argv = []string{"status", "--short", "--branch", "--untracked-files=normal", "--ignore-submodules=all"}
		c.a = assessment{tier: plugins.TierAuto, reason: "Reading git needs no card."}
	case "diff":
		c.argv = []string{"diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--stat", "--patch"}
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
		c.ownFilters = true
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
		c.ownFilters = true
		if mode == runlist.ModeRun {
			c.a = assessment{tier: plugins.TierAuto, reason: "Run mode stashes without a card: the repository's own clean and smudge filters run, as its scripts do."}
		} else {
			c.a = assessment{tier: plugins.TierGated, reason: "A stash push runs the repository's own clean and smudge filters (code in files an agent can write), so it is gated outside run mode."}
		}
	default:
		return nil, refusef("git %s is not offered.", c.args.Action)
	}
	c.box = t.p.box(c.s, true)
	return c, nil
}

// TierFor is the action's tier in the agent's mode (§4).
func (t *gitTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	c, err := t.prepare(ctx, call)
	if err != nil {
		return tierOf(assessment{}, err)
	}
	return c.box.tier(c.a.tier)
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
		Detail:  map[string]any{"action": c.args.Action, "argv": c.argv, "dir": c.s.dir(), "sandbox": c.box.detail()},
		Preview: fmt.Sprintf("git %s\nin %s (git's own configuration, hooks, pager and signing off)\nRule: %s\n%s", quoteArgv(c.argv), c.s.dir(), c.a.reason, c.box.describe()),
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
	g, err := t.hardened(c.s)
	if err != nil {
		return plugins.Result{}, err
	}
	g.box, g.approved = c.box, approved
	how := gitNoFilters
	switch {
	case c.args.Action == "init":
		how = gitNoRepository
	case c.ownFilters:
		how = gitOwnFilters
	}
	if c.args.Action == "commit" {
		if res, err := g.run(ctx, how, "add", "--all", "--", "."); err != nil || res.ExitCode != 0 {
			return gitResult(res, err)
		}
	}
	res, err := g.run(ctx, how, c.argv...)
	return gitResult(res, err)
}

// runGit runs argv (git and its arguments, -c options included) hardened as developer.git
// runs its read actions: none of the repository's filter drivers runs.
func (t *gitTool) runGit(ctx context.Context, s *space, argv []string) (spawn.Result, error) {
	g, err := t.hardened(s)
	if err != nil {
		return spawn.Result{}, err
	}
	g.box = t.p.box(s, true)
	return g.run(ctx, gitNoFilters, argv[1:]...)
}

// hardened is git for s as developer.git runs it, with the empty hooks directory made.
func (t *gitTool) hardened(s *space) (*hardenedGit, error) {
	hooks := t.hooksDir()
	if err := os.MkdirAll(hooks, 0o700); err != nil {
		return nil, fmt.Errorf("developer: empty hooks directory: %w", err)
	}
	return &hardenedGit{p: t.p, s: s, hooks: hooks}, nil
}

// gitResult turns a git run into the model's result.
func gitResult(res spawn.Result, err error) (plugins.Result, error) {
	if isRefusal(err) {
		return toolResult(err)
	}
	if err != nil {
		return toolResult(refusef("git could not be started: %v", err))
	}
	text := strings.TrimRight(res.Output, "\n")
	if text == "" {
		text = "(no output)"
	}
	if note := res.Quarantine.String(); note != "" {
		text += "\n" + note
	}
	return plugins.Result{Text: fmt.Sprintf("$ %s\n(exit %d)\n%s", quoteArgv(res.Argv[len(res.Argv)-min(len(res.Argv), 6):]), res.ExitCode, text), IsError: res.ExitCode != 0}, nil
}

// hooksDir is the empty directory git's core.hooksPath points at: <data>/developer/empty-hooks.
func (t *gitTool) hooksDir() string {
	return filepath.Join(filepath.Dir(t.p.logDir()), "empty-hooks")
}

// gitHow is what a hardened git run may run of the repository's own.
type gitHow uint8

const (
	// gitNoFilters: the repository's configuration is read first (gitConfig), and every
	// filter driver it names is switched off for the run. Status, diff, log, branch,
	// stash list and the summary's diff run so, in every mode.
	gitNoFilters gitHow = iota
	// gitOwnFilters: the repository's filter drivers run, as its scripts do (a commit and
	// a stash push, gated outside run mode for it).
	gitOwnFilters
	// gitNoRepository: there is no repository yet (init).
	gitNoRepository
)

// gitQueryTimeout bounds a git that only reports (its configuration, a path).
const gitQueryTimeout = 30 * time.Second

// maxGitReport bounds what such a git may print.
const maxGitReport = 4 << 20

// hardenedGit runs git in one workspace the way §4 has it: "Git runs with its own
// configuration disabled": no system or global configuration, the working tree and the
// repository pinned to the workspace (a core.worktree does not move them), no hooks (an
// empty core.hooksPath), no pager, no signing program, no ssh, credential helper or
// transport, no fsmonitor, no submodule recursion, no automatic gc; and, unless the action
// is one that runs the repository's own filters by design, none of the filter drivers its
// configuration names.
type hardenedGit struct {
	p     *plugin
	s     *space
	hooks string // the empty hooks directory
	// overrides are the settings of GIT_CONFIG_COUNT for this run: the filter drivers off.
	overrides [][2]string
	// box is the sandbox git runs in; with none, it runs only for a call the owner approved.
	box      boxed
	approved *plugins.Envelope
}

// hardenedOptions are git's global options for every hardened run: configuration given
// on the command line, which outranks every file git reads.
func (g *hardenedGit) hardenedOptions() []string {
	opts := []string{"--no-pager"}
	for _, kv := range [][2]string{
		{"core.hooksPath", g.hooks},
		{"core.pager", "cat"},
		{"core.editor", "true"},
		{"core.sshCommand", "false"},
		{"core.askPass", ""},
		{"core.fsmonitor", "false"},
		{"credential.helper", ""},
		{"protocol.allow", "never"},
		{"commit.gpgSign", "false"},
		{"tag.gpgSign", "false"},
		{"log.showSignature", "false"},
		{"gpg.program", "false"},
		{"gpg.openpgp.program", "false"},
		{"gpg.x509.program", "false"},
		{"gpg.ssh.program", "false"},
		{"gpg.ssh.defaultKeyCommand", "false"},
		{"diff.ignoreSubmodules", "all"},
		{"status.submoduleSummary", "false"},
		{"submodule.recurse", "false"},
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
		{"user.name", "buddi developer agent"},
		{"user.email", "developer@buddi.invalid"},
	} {
		opts = append(opts, "-c", kv[0]+"="+kv[1])
	}
	return opts
}

// env is the run's environment: the workspace's, git's isolation variables, the working
// tree and repository pinned unless there is none yet, and the overrides.
func (g *hardenedGit) env(how gitHow) []string {
	env := append(g.p.boxEnv(g.s, g.box), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_ASKPASS=", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true",
		"GIT_OPTIONAL_LOCKS=0")
	if how != gitNoRepository {
		env = append(env, "GIT_DIR="+filepath.Join(g.s.dir(), ".git"), "GIT_WORK_TREE="+g.s.dir())
	}
	if how == gitNoFilters && len(g.overrides) > 0 {
		env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(g.overrides)))
		for i, kv := range g.overrides {
			env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
		}
	}
	return env
}

// run runs git with args in the workspace. Unless how says otherwise, it first reads the
// repository's configuration as git reports it and switches off every filter driver named
// there; a configuration taken from a file outside the repository's git directory is a
// refusal.
func (g *hardenedGit) run(ctx context.Context, how gitHow, args ...string) (spawn.Result, error) {
	if how != gitNoRepository {
		cfg, err := g.config(ctx)
		if err != nil {
			return spawn.Result{}, err
		}
		if err := cfg.fromRepository(g.s.dir()); err != nil {
			return spawn.Result{}, err
		}
		g.overrides = cfg.filtersOff()
	}
	argv := append(append([]string{"git"}, g.hardenedOptions()...), args...)
	spec, err := g.box.spec(spawn.Spec{Argv: argv, Dir: g.s.dir(), Env: g.env(how), Timeout: time.Minute}, g.approved, Name+".git")
	if err != nil {
		return spawn.Result{}, err
	}
	return spawn.Run(ctx, spec)
}

// config asks git, hardened, for the repository's git directories and its whole
// configuration with where each entry came from.
func (g *hardenedGit) config(ctx context.Context) (*gitConfig, error) {
	env := g.env(gitOwnFilters) // the files as they are, with no override of ours
	dirs, err := g.p.gitReport(ctx, g.s, g.s.dir(), env, append(g.hardenedOptions(), "rev-parse", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir")...)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(dirs), "\n"), "\n")
	if len(lines) != 2 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) {
		return nil, refusef("git reported the repository's directories as %q, which is not two absolute paths, so git is not run.", dirs)
	}
	list, err := g.p.gitReport(ctx, g.s, g.s.dir(), env, append(g.hardenedOptions(), "config", "--list", "-z", "--show-origin", "--show-scope")...)
	if err != nil {
		return nil, err
	}
	entries, err := parseConfigList(list)
	if err != nil {
		return nil, refusef("git's report of the repository's configuration could not be read (%v), so git is not run.", err)
	}
	return &gitConfig{gitDirs: lines, entries: entries}, nil
}

// gitReport runs git for what it prints on its standard output, which is returned whole
// (bounded by maxGitReport). Nothing of the repository's runs in such a git: it only reads
// configuration and names paths. A git that exits non-zero is an error with what it said.
func (p *plugin) gitReport(ctx context.Context, s *space, dir string, env []string, args ...string) ([]byte, error) {
	bin, err := spawn.Resolve("git", envValue(env, "PATH"))
	if err != nil {
		return nil, refusef("git is not on the workspace's PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, gitQueryTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut limitedBuffer
	out.max, errOut.max = maxGitReport, 4096
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("developer: git %s in %s: %w: %s", strings.Join(args[len(args)-min(len(args), 4):], " "), dir, err, strings.TrimSpace(errOut.String()))
	}
	if out.over {
		return nil, refusef("git printed more than %d bytes where a short report was expected, so git is not run.", maxGitReport)
	}
	return out.Bytes(), nil
}

// limitedBuffer keeps at most max bytes and says whether more came.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

// Write keeps what fits.
func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// envValue is the value of name in env as a program sees it (the last one wins).
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// configEntry is one entry of git config --list --show-scope --show-origin -z.
type configEntry struct {
	scope  string // "local", "worktree", "command", …
	origin string // "file:<path>", "command line:", …
	key    string // section.subsection.name, section and name in lower case
	value  string
	// hasValue is false for a key written with no "=" (a boolean true).
	hasValue bool
}

// parseConfigList reads the output of git config --list -z --show-scope --show-origin:
// for each entry its scope, its origin and its key, then a newline and the value unless
// the key has none, each ended by a NUL. Anything else is an error: the caller fails closed.
func parseConfigList(out []byte) ([]configEntry, error) {
	fields := strings.Split(string(out), "\x00")
	if fields[len(fields)-1] != "" {
		return nil, fmt.Errorf("the report does not end with a NUL")
	}
	fields = fields[:len(fields)-1]
	if len(fields)%3 != 0 {
		return nil, fmt.Errorf("the report has %d fields, not a whole number of entries", len(fields))
	}
	var entries []configEntry
	for i := 0; i < len(fields); i += 3 {
		e := configEntry{scope: fields[i], origin: fields[i+1]}
		e.key, e.value, e.hasValue = strings.Cut(fields[i+2], "\n")
		if e.scope == "" || e.origin == "" || !validConfigKey(e.key) {
			return nil, fmt.Errorf("entry %d (%q %q %q) is not a scope, an origin and a key", i/3+1, e.scope, e.origin, e.key)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// validConfigKey reports whether k is a key as git prints it: a section and a name of
// letters, digits, - (and . inside the section), around an optional subsection of anything
// but a newline or a NUL.
func validConfigKey(k string) bool {
	first, last := strings.IndexByte(k, '.'), strings.LastIndexByte(k, '.')
	if first <= 0 || last == len(k)-1 {
		return false
	}
	for _, part := range []string{k[:first], k[last+1:]} {
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return !strings.ContainsAny(k, "\n\x00")
}

// gitConfig is a repository's configuration as git reported it.
type gitConfig struct {
	// gitDirs are the repository's git directory and its common directory (the same but
	// for a linked worktree).
	gitDirs []string
	entries []configEntry
}

// fromRepository fails when an entry comes from a file outside the repository's git
// directories (an include of a file in the working tree, or anywhere else): code in the
// workspace could change such a file between this reading and git's own, and name a
// filter this run does not switch off. The command line is ours. ws is where a relative
// origin is read from.
func (c *gitConfig) fromRepository(ws string) error {
	var dirs []string
	for _, d := range c.gitDirs {
		dirs = append(dirs, realPath(d))
	}
	for _, e := range c.entries {
		if e.scope == "command" {
			continue
		}
		file, ok := strings.CutPrefix(e.origin, "file:")
		if !ok {
			return refusef("The repository's configuration sets %s from %q, which is not a file in its .git directory, so git is not run.", e.key, e.origin)
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(ws, file)
		}
		real := realPath(file)
		inside := false
		for _, d := range dirs {
			if real == d || strings.HasPrefix(real, d+string(filepath.Separator)) {
				inside = true
			}
		}
		if !inside {
			return refusef("The repository's configuration takes %s from %s, a file outside its .git directory that code in the workspace could change, so git is not run; remove the include that names it from .git/config.", e.key, filepath.Clean(file))
		}
	}
	return nil
}

// realPath is p cleaned, with its links resolved when it exists.
func realPath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// filtersOff are the settings that switch off every filter driver the configuration
// names: no clean, smudge or process command, and not required, so a driver with no
// command is no failure either.
func (c *gitConfig) filtersOff() [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for _, e := range c.entries {
		rest, ok := strings.CutPrefix(e.key, "filter.")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 || seen[rest[:i]] {
			continue
		}
		driver := rest[:i]
		seen[driver] = true
		for _, kv := range [][2]string{{"clean", ""}, {"smudge", ""}, {"process", ""}, {"required", "false"}} {
			out = append(out, [2]string{"filter." + driver + "." + kv[0], kv[1]})
		}
	}
	return out
}

// hooksLookup asks the owner's own git — with the owner's configuration, as a git the
// owner runs would read it, not the hardened one — where it runs hooks from in a
// repository: core.hooksPath, or .git/hooks. A repository git does not take for one, or
// no git on the workspace's PATH, has none beyond .git; a git that cannot be run is an
// error, and the write asks or is refused.
func (p *plugin) hooksLookup(s *space) confine.HooksLookup {
	return func(repo string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), gitQueryTimeout)
		defer cancel()
		out, err := p.gitReport(ctx, s, repo, s.env(p.owner), "-c", "core.fsmonitor=false", "rev-parse", "--path-format=absolute", "--git-path", "hooks")
		var exit *exec.ExitError
		switch {
		case isRefusal(err):
			return "", nil // no git
		case errors.As(err, &exit):
			return "", nil // not a repository to this git
		case err != nil:
			return "", err
		}
		return strings.TrimSuffix(string(out), "\n"), nil
	}
}
