package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/confine"
	"buddi/plugins/developer/runlist"
)

// workspaceTool is developer.workspace (§2): it sets or changes the agent's one workspace.
// It is gated in every mode, and its card names the directory and what it holds.
type workspaceTool struct{ p *plugin }

var (
	_ plugins.Tool         = (*workspaceTool)(nil)
	_ plugins.TierNarrower = (*workspaceTool)(nil)
)

// Bounds of the workspace card's survey.
const (
	// surveyMaxEntries bounds the top-level names the card counts.
	surveyMaxEntries = 10000
	// surveyNamed is how many project names the card lists.
	surveyNamed = 5
)

// WorkspaceSafety is §8's sentence, on the workspace card and on Settings → Developer.
const WorkspaceSafety = "A developer agent runs code you did not write, inside this directory, with the rights of your user. Give it a workspace you would let a colleague use."

// preconditionDirectory names the directory an approved card was for.
const preconditionDirectory = "workspace directory"

// Spec declares developer.workspace.
func (t *workspaceTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".workspace",
		Description: "Ask the owner to make a directory your workspace: the one place the developer tools work in. " +
			"Give the absolute path of an existing directory. The owner approves it on a card; you have at most one workspace at a time.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"directory": {"type": "string", "minLength": 2, "maxLength": 4096, "pattern": "^/",
					"description": "The absolute path of the directory."}
			},
			"required": ["directory"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectStateWrite},
		Tier:    plugins.TierSession,
		Timeout: 30 * time.Second,
	}
}

// workspaceArgs are developer.workspace's arguments.
type workspaceArgs struct {
	Directory string `json:"directory"`
}

// survey is what a directory holds, for the card.
type survey struct {
	given, dir         string
	repository         bool
	repositoryLink     bool   // .git is a symbolic link
	enclosing          string // the repository above it, when it is not one itself
	projects           []string
	dirs, files, other int
	links              int
	partial            bool
	protectedInside    []string
	current            string // the agent's workspace now, when another
	mode               runlist.Mode
}

// TierFor is gated in every mode: only the owner grants a directory.
func (t *workspaceTool) TierFor(context.Context, plugins.Call) plugins.Tier {
	return plugins.TierGated
}

// prepare validates the directory and surveys it.
func (t *workspaceTool) prepare(ctx context.Context, call plugins.Call) (*survey, *confine.Root, error) {
	var args workspaceArgs
	if err := decodeArgs(call.Args, &args); err != nil {
		return nil, nil, err
	}
	if call.Agent == "" {
		return nil, nil, refusef("The call names no agent, and a workspace belongs to an agent.")
	}
	if !filepath.IsAbs(args.Directory) {
		return nil, nil, refusef("%q is not an absolute path; a workspace is named by its absolute path.", args.Directory)
	}
	root, err := t.p.deps.Root(args.Directory)
	if err != nil {
		return nil, nil, refusef("%s cannot be a workspace: %v", args.Directory, strings.TrimPrefix(err.Error(), "confine: "))
	}
	s := &survey{given: filepath.Clean(args.Directory), dir: root.Dir()}
	if err := t.look(s, root); err != nil {
		return nil, nil, err
	}
	if t.p.deps.Pool == nil {
		return nil, nil, errNoDatabase
	}
	cur, ok, err := t.p.store.Workspace(ctx, call.Agent)
	if err != nil {
		return nil, nil, err
	}
	if ok && cur.Directory != s.dir {
		s.current = cur.Directory
	}
	if s.mode, err = t.p.store.Mode(ctx, call.Agent); err != nil {
		return nil, nil, err
	}
	return s, root, nil
}

// look fills in what the directory holds: whether it is a repository, its top-level
// entries and the projects among them, and the protected paths inside it.
func (t *workspaceTool) look(s *survey, root *confine.Root) error {
	repo, err := root.IsRepository()
	switch {
	case confine.IsRefusal(err):
		s.repositoryLink = true
	case err != nil:
		return err
	}
	s.repository = repo
	if !repo {
		if s.enclosing, err = root.EnclosingRepository(); err != nil {
			return err
		}
	}
	sum, err := root.Walk("", "", confine.Limits{MaxDepth: 1, MaxEntries: surveyMaxEntries}, func(e confine.Entry) error {
		switch {
		case e.IsDir():
			s.dirs++
			if _, err := os.Lstat(filepath.Join(s.dir, e.Path, ".git")); err == nil && !isGitName(e.Name) {
				s.projects = append(s.projects, e.Name)
			}
		case e.Mode.IsRegular():
			s.files++
		default:
			s.other++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("developer: survey %s: %w", s.dir, err)
	}
	s.links, s.partial = sum.SkippedLinks, sum.EntryLimitReached
	s.protectedInside = t.protectedInside(root)
	return nil
}

// protectedInside lists the protected paths that exist inside the directory, as the owner
// would write them (~/.ssh).
func (t *workspaceTool) protectedInside(root *confine.Root) []string {
	homes := []string{}
	if h := t.p.deps.Home; h != "" {
		homes = append(homes, filepath.Clean(h))
	} else if h, err := os.UserHomeDir(); err == nil {
		homes = append(homes, h)
	}
	if len(homes) > 0 {
		if real, err := filepath.EvalSymlinks(homes[0]); err == nil && real != homes[0] {
			homes = append(homes, real)
		}
	}
	var out []string
	for _, p := range root.Protected() {
		if !within(p, root.Dir()) {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		show := p
		for _, h := range homes {
			if rel, ok := strings.CutPrefix(p, h+"/"); ok {
				show = "~/" + rel
				break
			}
		}
		if !slices.Contains(out, show) {
			out = append(out, show)
		}
	}
	slices.Sort(out)
	return out
}

// within reports whether p is dir or under it; both clean and absolute.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// isGitName reports whether a name is git's own directory, in any case.
func isGitName(name string) bool { return strings.EqualFold(name, ".git") }

// Describe renders the card: the directory, what it holds, what it replaces, and the rule.
func (t *workspaceTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	s, _, err := t.prepare(ctx, call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{
		Summary: fmt.Sprintf("Make %s the workspace of agent %s", s.dir, call.Agent),
		Effects: []plugins.Effect{plugins.EffectStateWrite},
		Targets: []string{s.dir},
		Detail: map[string]any{
			"agent":            call.Agent,
			"directory":        s.dir,
			"given":            s.given,
			"repository":       s.repository,
			"enclosing":        s.enclosing,
			"projects":         len(s.projects),
			"directories":      s.dirs,
			"files":            s.files,
			"skipped_links":    s.links,
			"protected_inside": s.protectedInside,
			"replaces":         s.current,
			"mode":             string(s.mode),
		},
		Preview:       s.preview(call.Agent),
		Preconditions: []plugins.Precondition{{What: preconditionDirectory, Value: s.dir}},
	}, nil
}

// preview is the card's text.
func (s *survey) preview(agent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workspace for agent %s: %s\n", agent, s.dir)
	if s.given != s.dir {
		fmt.Fprintf(&b, "(named as %s, which resolves there)\n", s.given)
	}
	b.WriteString("\n")
	switch {
	case s.repositoryLink:
		b.WriteString("Its .git is a symbolic link, which the tools refuse: the git tools will not work here.\n")
	case s.repository:
		b.WriteString("It is the root of a git repository.\n")
	case len(s.projects) >= 2:
		fmt.Fprintf(&b, "It is a folder of %d projects (git repositories: %s). Reads, edits and searches work across them; the git tools refuse here, because the workspace is not a repository root.\n",
			len(s.projects), nameSome(s.projects))
	case len(s.projects) == 1:
		fmt.Fprintf(&b, "It is not a git repository; it holds one, %s/. The git tools refuse here, because the workspace is not a repository root.\n", s.projects[0])
	case s.enclosing != "":
		fmt.Fprintf(&b, "It is not a git repository's root: it is inside the repository at %s, so the git tools refuse here.\n", s.enclosing)
	default:
		b.WriteString("It is not a git repository.\n")
	}
	total := s.dirs + s.files + s.other
	at := ""
	if s.partial {
		at = "at least "
	}
	fmt.Fprintf(&b, "It holds %s%s at its top level: %s, %s", at, plural(total, "entry", "entries"),
		plural(s.dirs, "directory", "directories"), plural(s.files, "file", "files"))
	if s.other > 0 {
		fmt.Fprintf(&b, ", %s", plural(s.other, "special file", "special files"))
	}
	b.WriteString(".\n")
	if s.links > 0 {
		fmt.Fprintf(&b, "It has %s at its top level, which the tools step over and never follow.\n", plural(s.links, "symbolic link", "symbolic links"))
	}
	if len(s.protectedInside) > 0 {
		fmt.Fprintf(&b, "Protected paths inside it stay refused to every tool: %s.\n", strings.Join(s.protectedInside, ", "))
	}
	if s.current != "" {
		fmt.Fprintf(&b, "It replaces the current workspace %s; commands remembered there do not carry over.\n", s.current)
	}
	fmt.Fprintf(&b, "The agent's mode is %s; the owner changes it on Settings → Developer.\n", s.mode)
	fmt.Fprintf(&b, "\n%s\n\nWhy a card: %s", WorkspaceSafety, reasonWorkspace)
	return b.String()
}

// nameSome lists the first few names, with a count of the rest.
func nameSome(names []string) string {
	shown := names
	if len(shown) > surveyNamed {
		shown = shown[:surveyNamed]
	}
	out := make([]string, len(shown))
	for i, n := range shown {
		out[i] = n + "/"
	}
	s := strings.Join(out, ", ")
	if rest := len(names) - len(shown); rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}

// Execute records the workspace. It runs only as an approved action, and refuses when the
// directory no longer resolves to the one on the approved card.
func (t *workspaceTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	if approved == nil {
		return toolResult(refusef(reasonNeedApproval, call.Tool, reasonWorkspace))
	}
	var args workspaceArgs
	if err := decodeArgs(call.Args, &args); err != nil {
		return toolResult(err)
	}
	root, err := t.p.deps.Root(args.Directory)
	if err != nil {
		return toolResult(refusef("%s cannot be a workspace: %v", args.Directory, strings.TrimPrefix(err.Error(), "confine: ")))
	}
	want, ok := precondition(approved, preconditionDirectory)
	if !ok || want != root.Dir() {
		return toolResult(refusef("%s now resolves to %s, not the %s the owner approved; nothing was changed.", args.Directory, root.Dir(), want))
	}
	if err := ctx.Err(); err != nil {
		return plugins.Result{}, err
	}
	ws, err := t.p.store.SetWorkspace(ctx, call.Agent, root.Dir(), "approval", t.p.owner.Path)
	if err != nil {
		return plugins.Result{}, err
	}
	// The agent's processes ran in the old workspace: they stop with it (§4).
	if err := t.p.stopAllProcesses(ctx, call.Agent); err != nil {
		return plugins.Result{}, err
	}
	mode, err := t.p.store.Mode(ctx, call.Agent)
	if err != nil {
		return plugins.Result{}, err
	}
	data, _ := json.Marshal(map[string]string{"agent": ws.Agent, "directory": ws.Directory, "mode": string(mode)})
	return plugins.Result{
		Text: fmt.Sprintf("The workspace of agent %s is now %s (mode %s). Paths in the developer tools are relative to it.", ws.Agent, ws.Directory, mode),
		Data: data,
	}, nil
}

// precondition returns the value of the approved envelope's precondition named what.
func precondition(env *plugins.Envelope, what string) (string, bool) {
	for _, p := range env.Preconditions {
		if p.What == what {
			return p.Value, true
		}
	}
	return "", false
}
