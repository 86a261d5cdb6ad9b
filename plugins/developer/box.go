package developer

import (
	"fmt"
	"os"
	"path/filepath"

	"buddi/plugins"
	"buddi/plugins/developer/spawn"
	"buddi/sandbox"
)

// boxCacheDir is where boxed commands keep their package caches, under the owner's home: a
// cache of their own, never the owner's (~/.cache/go-build, ~/.npm, ~/.cache/pip). A build
// cache is trusted by whoever reads it, so a command that could write the owner's could
// plant what the owner's next build, outside any box, picks up.
const boxCacheDir = ".cache/buddi-box"

// boxed is how the commands of one call run: in a box (Policy), or, where this machine can
// make none, unboxed with the owner's approval, and why.
type boxed struct {
	policy *sandbox.Policy // nil: no box can be made here
	why    string          // with no policy: the sentence saying why
	// readOnly adds the paths git runs hooks from, looked up (a git run) only when a command
	// is spawned, not each time a call is judged or described.
	readOnly func() []string
}

// describe is the card's line on the box.
func (b boxed) describe() string {
	if b.policy == nil {
		return "NOT sandboxed: " + b.why + " Approving it runs the command with all of your access."
	}
	return b.policy.Describe()
}

// detail is the envelope's record of the box, so an approval binds it: a box that becomes
// available, or stops being, between the card and the run changes the action's hash.
func (b boxed) detail() string {
	if b.policy == nil {
		return "none: " + b.why
	}
	return b.policy.Describe()
}

// spec puts the box in a command's Spec: the policy, or Unboxed when the owner approved a
// call described as unboxed. An auto call with no box is refused.
func (b boxed) spec(s spawn.Spec, approved *plugins.Envelope, tool string) (spawn.Spec, error) {
	if b.policy != nil {
		pol := *b.policy
		if b.readOnly != nil {
			pol.ReadOnly = append(append([]string(nil), pol.ReadOnly...), b.readOnly()...)
		}
		s.Box = &pol
		return s, nil
	}
	if approved == nil {
		return s, refusef("%s cannot run without the owner's approval here: %s", tool, b.why)
	}
	s.Unboxed = true
	return s, nil
}

// tier narrows a call's tier for the box: with no box, every command asks.
func (b boxed) tier(t plugins.Tier) plugins.Tier {
	if b.policy == nil {
		return plugins.TierGated
	}
	return t
}

// box is the sandbox the commands of s run in: the workspace (and, for developer.git, its
// .git) writable, the box's caches writable, buddi's data directory and the paths the
// confinement protects hidden. Where no box can be made, it says why.
func (p *plugin) box(s *space, gitWritable bool) boxed {
	check := p.deps.SandboxCheck
	if check == nil {
		check = sandbox.Check
	}
	if err := check(); err != nil {
		return boxed{why: fmt.Sprintf("this machine cannot sandbox commands (%v).", err)}
	}
	home := p.ownerHome()
	data := p.deps.DataDir
	if data == "" && home != "" {
		data = filepath.Join(home, ".buddi")
	}
	pol := &sandbox.Policy{Home: filepath.Clean(data), Workspace: s.dir(), GitWritable: gitWritable}
	if home != "" {
		pol.Writable = []string{filepath.Join(home, boxCacheDir)}
	}
	for _, h := range s.root.Protected() {
		if h != pol.Home {
			pol.Hidden = append(pol.Hidden, h)
		}
	}
	b := boxed{policy: pol}
	if !gitWritable {
		pol.ReadOnly = append(pol.ReadOnly, filepath.Join(s.dir(), ".husky"))
		b.readOnly = func() []string {
			git := filepath.Join(s.dir(), ".git")
			if hooks, err := p.hooksLookup(s)(s.dir()); err == nil && hooks != "" && within(hooks, s.dir()) && !within(hooks, git) {
				return []string{hooks}
			}
			return nil
		}
	}
	return b
}

// ownerHome is the owner's home directory: Deps.Home, else the captured HOME, else the
// account's.
func (p *plugin) ownerHome() string {
	if p.deps.Home != "" {
		return p.deps.Home
	}
	if p.owner.Home != "" {
		return p.owner.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// boxEnv is the environment of a command of s run in b: the workspace's, with the box's
// private /tmp as TMPDIR and the package managers pointed at the box's own caches.
func (p *plugin) boxEnv(s *space, b boxed) []string {
	owner := p.owner
	if b.policy == nil || len(b.policy.Writable) == 0 {
		return s.env(owner)
	}
	owner.TmpDir = "/tmp"
	cache := b.policy.Writable[0]
	return append(s.env(owner),
		"XDG_CACHE_HOME="+filepath.Join(cache, "xdg"), // pip, go's build cache, yarn and others
		"GOCACHE="+filepath.Join(cache, "go-build"),
		"GOMODCACHE="+filepath.Join(cache, "go-mod"),
		"npm_config_cache="+filepath.Join(cache, "npm"),
		"npm_config_store_dir="+filepath.Join(cache, "pnpm-store"),
		"PIP_CACHE_DIR="+filepath.Join(cache, "pip"),
		"BUN_INSTALL_CACHE_DIR="+filepath.Join(cache, "bun"),
		"CARGO_HOME="+filepath.Join(cache, "cargo"),
	)
}
