package developer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"buddi/plugins"
)

// PreviewChecker asks buddi's preview server about a process's preview (§12): whether it
// can be opened now, and whether its first page used absolute asset paths.
type PreviewChecker interface {
	// Check reports on the preview of the process name.
	Check(ctx context.Context, name string) (ok, absoluteAssets bool, problem string)
}

// Screenshotter takes a PNG of the whole page at url in a window of width × height.
type Screenshotter interface {
	// Screenshot loads url and returns the PNG.
	Screenshot(ctx context.Context, url string, width, height int) ([]byte, error)
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
		Name:        Name + ".screenshot",
		Description: "Take a screenshot of a page of one of your running processes (started with a port), at desktop or phone width; the owner sees it.",
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
	if t.p.deps.Screenshots == nil || t.p.deps.Artifacts == nil {
		return toolResult(refusef("Screenshots are not available in this buddi."))
	}
	width, height, size := 1280, 800, "desktop"
	if a.Phone {
		width, height, size = 390, 844, "phone"
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", *pr.Port, path)
	png, err := t.p.deps.Screenshots.Screenshot(ctx, url, width, height)
	if err != nil {
		return toolResult(refusef("The screenshot of %s failed: %v", a.Name, err))
	}
	id, err := t.p.deps.Artifacts.Save(ctx, call.Agent, call.ConversationID, call.RunID, a.Name+"-"+size+".png", "image/png",
		fmt.Sprintf("developer.screenshot of %s at %s (%s width)", a.Name, path, size), png)
	if err != nil {
		return plugins.Result{}, err
	}
	data, _ := json.Marshal(map[string]any{"renderer": "image", "artifact": id, "title": a.Name + " " + path})
	return plugins.Result{Text: fmt.Sprintf("Took a screenshot of %s at %s (%s width, %d bytes); the owner sees it.", a.Name, path, size, len(png)), Data: data}, nil
}
