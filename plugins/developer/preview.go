package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"buddi/plugins"
	"buddi/plugins/developer/shot"
	"buddi/sandbox"
	"buddi/surfaces/preview/listening"
)

// PreviewChecker asks buddi's preview server about a process's preview (§12): whether it
// can be opened now, and whether its first page used absolute asset paths.
type PreviewChecker interface {
	// Check reports on the preview of the process name.
	Check(ctx context.Context, name string) (ok, absoluteAssets bool, problem string)
}

// Screenshotter takes a PNG of the whole page, reaching the page's origin and nothing else.
type Screenshotter interface {
	// Screenshot loads the page and returns the PNG and the requests it kept the page from.
	Screenshot(ctx context.Context, page shot.Page) (shot.Shot, error)
}

// ArtifactStore keeps a file the owner sees on the canvas and returns its id.
type ArtifactStore interface {
	// Save keeps data and returns the artifact's id.
	Save(ctx context.Context, agent, conversationID, runID, name, mediaType, source string, data []byte) (string, error)
}

// previewTool is developer.preview.
type previewTool struct{ p *plugin }

// screenshotTool is developer.screenshot.
type screenshotTool struct{ p *plugin }

var (
	_ plugins.Tool         = (*previewTool)(nil)
	_ plugins.TierNarrower = (*previewTool)(nil)
	_ plugins.Tool         = (*screenshotTool)(nil)
	_ plugins.TierNarrower = (*screenshotTool)(nil)
)

// Spec declares developer.preview.
func (t *previewTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".preview",
		Description: "Show the owner one of your running processes (started with a port) in a preview panel, served through buddi. " +
			"It returns no address: the owner opens it from the panel.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {"name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,31}$"}},
			"required": ["name"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectRead},
		Tier:    plugins.TierSession,
		Timeout: 30 * time.Second,
	}
}

// TierFor: pointing the owner at one's own process needs no card.
func (t *previewTool) TierFor(context.Context, plugins.Call) plugins.Tier { return plugins.TierAuto }

// Describe renders what is shown.
func (t *previewTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a nameArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Show the preview of " + a.Name, Effects: []plugins.Effect{plugins.EffectRead}}, nil
}

// ownProcess is the agent's running process name, with its port.
func (p *plugin) ownProcess(ctx context.Context, agent, name string) (Process, error) {
	procs, err := p.store.Processes(ctx, agent)
	if err != nil {
		return Process{}, err
	}
	for _, pr := range procs {
		if pr.Name != name {
			continue
		}
		if !pr.Running {
			return pr, refusef("%s has exited: start it again with developer.start.", name)
		}
		if pr.Port == nil {
			return pr, refusef("%s was started without a port: start it again with developer.start and the port it listens on.", name)
		}
		return pr, nil
	}
	return Process{}, refusef("You have no running process named %q.", name)
}

// Execute checks the preview and names it for the panel.
func (t *previewTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a nameArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return toolResult(err)
	}
	pr, err := t.p.ownProcess(ctx, call.Agent, a.Name)
	if err != nil {
		return toolResult(err)
	}
	if t.p.deps.Previews == nil {
		return toolResult(refusef("Previews are not served by this buddi."))
	}
	ok, absolute, problem := t.p.deps.Previews.Check(ctx, a.Name)
	if !ok {
		return toolResult(refusef("The preview of %s cannot be opened: %s", a.Name, problem))
	}
	src := "/preview/" + Name + "/" + a.Name + "/"
	text := fmt.Sprintf("The preview of %s (port %d) is in the owner's preview panel; they open it from there.", a.Name, *pr.Port)
	if absolute {
		text += fmt.Sprintf(" Its page loads assets from absolute paths (/…), which may not load under the preview's path %s: a base path setting in the app fixes that.", src)
	}
	data, _ := json.Marshal(map[string]any{"renderer": "preview", "src": src, "title": a.Name})
	return plugins.Result{Text: text, Data: data}, nil
}

// Spec declares developer.screenshot.
func (t *screenshotTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".screenshot",
		Description: "Take a screenshot of a page of one of your running processes (started with a port), at desktop or phone width; the owner sees it. " +
			"The browser reaches only the process's own address: whatever the page asks of another host or port is refused, and said.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"name":  {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,31}$"},
				"path":  {"type": "string", "pattern": "^/", "maxLength": 2048, "description": "The page's path, e.g. / or /settings?tab=2."},
				"phone": {"type": "boolean", "description": "Phone width (390 px) instead of desktop (1280 px)."}
			},
			"required": ["name"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectRead},
		Tier:    plugins.TierSession,
		Timeout: 90 * time.Second,
	}
}

// TierFor: looking at one's own process's page needs no card.
func (t *screenshotTool) TierFor(context.Context, plugins.Call) plugins.Tier { return plugins.TierAuto }

type screenshotArgs struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Phone bool   `json:"phone"`
}

func (a screenshotArgs) page() (string, error) {
	path := a.Path
	if path == "" {
		path = "/"
	}
	// Only a path on the process's own origin: no scheme, no host, no way to another one.
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.ContainsAny(path, "\\\r\n\t ") {
		return "", refusef("The path %q is not a path on the process's own page: give one like /settings.", path)
	}
	return path, nil
}

// Describe renders what is captured.
func (t *screenshotTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a screenshotArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return plugins.Envelope{}, err
	}
	path, err := a.page()
	if err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Screenshot " + a.Name + " at " + path, Effects: []plugins.Effect{plugins.EffectRead}}, nil
}

// Execute loads the page in headless Chromium and keeps the PNG as an artifact.
func (t *screenshotTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a screenshotArgs
	if err := decodeArgs(call.Args, &a); err != nil {
		return toolResult(err)
	}
	path, err := a.page()
	if err != nil {
		return toolResult(err)
	}
	pr, err := t.p.ownProcess(ctx, call.Agent, a.Name)
	if err != nil {
		return toolResult(err)
	}
	if t.p.deps.Screenshots == nil || t.p.deps.Artifacts == nil || t.p.deps.Previews == nil {
		return toolResult(refusef("Screenshots are not available in this buddi."))
	}
	sock, err := t.p.ownSocket(ctx, pr)
	if err != nil {
		return toolResult(err)
	}
	// The browser runs in a box that hides what the commands' box hides.
	s, err := t.p.space(ctx, call.Agent)
	if err != nil {
		return toolResult(err)
	}
	b := t.p.box(s, false)
	if b.policy == nil {
		return toolResult(refusef("Screenshots need the sandbox, and %s", b.why))
	}
	width, height, size := 1280, 800, "desktop"
	if a.Phone {
		width, height, size = 390, 844, "phone"
	}
	page := shot.Page{Addr: sock.Addr, Path: path, Width: width, Height: height, Check: func() error {
		if !sock.Still() {
			return fmt.Errorf("%s no longer listens on port %d", a.Name, *pr.Port)
		}
		return nil
	}, Box: sandbox.Policy{Home: b.policy.Home, Hidden: b.policy.Hidden}}
	got, err := t.p.deps.Screenshots.Screenshot(ctx, page)
	if err != nil {
		return toolResult(refusef("The screenshot of %s failed: %v.%s", a.Name, strings.TrimSuffix(err.Error(), "."), refusedNote(got.Refused)))
	}
	png := got.PNG
	id, err := t.p.deps.Artifacts.Save(ctx, call.Agent, call.ConversationID, call.RunID, a.Name+"-"+size+".png", "image/png",
		fmt.Sprintf("developer.screenshot of %s at %s (%s width)", a.Name, path, size), png)
	if err != nil {
		return plugins.Result{}, err
	}
	data, _ := json.Marshal(map[string]any{"renderer": "image", "artifact": id, "title": a.Name + " " + path})
	return plugins.Result{Text: fmt.Sprintf("Took a screenshot of %s at %s (%s width, %d bytes); the owner sees it.%s", a.Name, path, size, len(png), refusedNote(got.Refused)), Data: data}, nil
}

// ownSocket proves that the process itself listens on the port it declared, as the preview
// proxy does: the preview server's check (not privileged, not Postgres's nor buddi's own, and
// the socket among the descriptors of the process or its group), then the socket found here,
// whose own address the browser is sent to and whose descriptor is checked again on every
// request the browser makes.
func (p *plugin) ownSocket(ctx context.Context, pr Process) (listening.Socket, error) {
	if ok, _, problem := p.deps.Previews.Check(ctx, pr.Name); !ok {
		return listening.Socket{}, refusef("%s cannot be screenshotted: %s", pr.Name, problem)
	}
	sock, ok, err := listening.Find(pr.Pid, *pr.Port)
	if err != nil {
		return listening.Socket{}, fmt.Errorf("developer: find the socket of %s: %w", pr.Name, err)
	}
	if !ok {
		return listening.Socket{}, refusef("%s is not listening on port %d (at 127.0.0.1, [::1] or every address), so it cannot be screenshotted: start it with the port it listens on.", pr.Name, *pr.Port)
	}
	return sock, nil
}

// refusedNote says which requests the page made outside its own origin, which the screenshot
// refused.
func refusedNote(refused []string) string {
	if len(refused) == 0 {
		return ""
	}
	return " The page asked for addresses outside its own origin, which a screenshot does not reach: " + strings.Join(refused, ", ") + "."
}
