package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/artifact"
	"buddi/plugins/developer"
	"buddi/plugins/developer/runlist"
	"buddi/queue"
	"buddi/surfaces/dashboard"
)

// failedJobs is the dashboard's view of failed work, over the queue.
type failedJobs struct {
	pool *pgxpool.Pool
	q    *queue.Queue
}

func (j failedJobs) Failed(ctx context.Context, all bool) (any, error) {
	jobs, err := queue.Failed(ctx, j.pool, all, 200)
	if err != nil {
		return nil, err
	}
	if jobs == nil {
		jobs = []queue.FailedJob{}
	}
	return map[string]any{"failed": jobs, "causes": queue.Group(jobs, time.Now())}, nil
}

func (j failedJobs) Retry(ctx context.Context, id int64) error {
	if err := j.q.Retry(ctx, j.pool, id); err != nil {
		if errors.Is(err, queue.ErrNotFailed) {
			return fmt.Errorf("job %d has not failed: %w", id, dashboard.ErrNotFound)
		}
		return err
	}
	return nil
}

func (j failedJobs) Dismiss(ctx context.Context, id int64) error {
	if err := queue.Dismiss(ctx, j.pool, id, "dashboard"); err != nil {
		if errors.Is(err, queue.ErrNotFailed) {
			return fmt.Errorf("job %d has not failed: %w", id, dashboard.ErrNotFound)
		}
		return err
	}
	return nil
}

// developerSettings is Settings → Developer, over the developer plugin's store.
type developerSettings struct {
	store *developer.Store
	// tailnet reports whether this buddi runs the tailnet node (the switch does nothing
	// without it, and the page says so).
	tailnet bool
}

// TailnetSentence is what Settings → Developer says about the Tailscale switch: what it
// exposes, and to whom.
const TailnetSentence = "When this is on, each process a developer agent starts on a port is also served on that same port of buddi's tailnet name, " +
	"at the root of its own address, to your tailnet login and no one else's. Anything the process serves is then reachable from every device signed in as you."

type workspaceRow struct {
	Agent     string `json:"agent"`
	Directory string `json:"directory"`
	Mode      string `json:"mode"`
}

type allowedRow struct {
	ID        int64  `json:"id"`
	Agent     string `json:"agent"`
	Workspace string `json:"workspace"`
	Command   string `json:"command"`
	Prefix    bool   `json:"prefix"`
}

func (d developerSettings) Settings(ctx context.Context) (any, error) {
	wss, err := d.store.Workspaces(ctx)
	if err != nil {
		return nil, err
	}
	out := struct {
		Sentence   string              `json:"sentence"`
		Workspaces []workspaceRow      `json:"workspaces"`
		Processes  []developer.Process `json:"processes"`
		Allowed    []allowedRow        `json:"allowed"`
		Tailnet    tailnetSwitch       `json:"tailnet"`
	}{Sentence: developer.WorkspaceSafety, Workspaces: []workspaceRow{}, Allowed: []allowedRow{},
		Tailnet: tailnetSwitch{Node: d.tailnet, Sentence: TailnetSentence}}
	if out.Tailnet.Previews, err = d.store.TailnetPreviews(ctx); err != nil {
		return nil, err
	}
	for _, w := range wss {
		if w.Refused != "" { // not one buddi set: no workspace (logged, and recorded as developer.forged)
			continue
		}
		mode, err := d.store.Mode(ctx, w.Agent)
		if err != nil {
			return nil, err
		}
		out.Workspaces = append(out.Workspaces, workspaceRow{Agent: w.Agent, Directory: w.Directory, Mode: string(mode)})
	}
	if out.Processes, err = d.store.Processes(ctx, ""); err != nil {
		return nil, err
	}
	if out.Processes == nil {
		out.Processes = []developer.Process{}
	}
	allowed, err := d.store.ListRemembered(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, a := range allowed {
		if a.Refused != "" { // allows nothing
			continue
		}
		out.Allowed = append(out.Allowed, allowedRow{ID: a.ID, Agent: a.Agent, Workspace: a.Workspace, Command: strings.Join(a.Argv, " "), Prefix: a.Prefix})
	}
	return out, nil
}

// tailnetSwitch is the Tailscale switch on Settings → Developer.
type tailnetSwitch struct {
	Previews bool   `json:"previews"` // the switch is on
	Node     bool   `json:"node"`     // this buddi runs the tailnet node
	Sentence string `json:"sentence"` // what it exposes
}

func (d developerSettings) SetTailnetPreviews(ctx context.Context, on bool) error {
	return d.store.SetTailnetPreviews(ctx, on)
}

func (d developerSettings) SetMode(ctx context.Context, agent, mode string) error {
	m, err := runlist.ParseMode(mode)
	if err != nil {
		return err
	}
	return d.store.SetMode(ctx, agent, m)
}

func (d developerSettings) StopProcess(ctx context.Context, agent, name string) error {
	err := d.store.StopProcess(ctx, agent, name)
	if errors.Is(err, developer.ErrNoProcess) {
		return fmt.Errorf("%s has no running process %s: %w", agent, name, dashboard.ErrNotFound)
	}
	return err
}

func (d developerSettings) StopAll(ctx context.Context) (int, error) {
	list, err := d.store.Processes(ctx, "")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range list {
		if !p.Running && p.State != "restarting" {
			continue // ended already (exited, stopped or given up in the last day): listed, not running
		}
		if err := d.store.StopProcess(ctx, p.Agent, p.Name); err != nil && !errors.Is(err, developer.ErrNoProcess) {
			return n, err
		}
		n++
	}
	return n, nil
}

func (d developerSettings) Forget(ctx context.Context, id int64) error {
	err := d.store.Forget(ctx, id)
	if errors.Is(err, developer.ErrNotRemembered) {
		return fmt.Errorf("no allowed command %d: %w", id, dashboard.ErrNotFound)
	}
	return err
}

// artifactFiles opens core's artifacts for the page.
type artifactFiles struct{ store *artifact.Store }

func (a artifactFiles) Open(ctx context.Context, id string) (string, []byte, error) {
	art, data, err := a.store.Open(ctx, id)
	if errors.Is(err, artifact.ErrNotFound) {
		return "", nil, fmt.Errorf("no artifact %s: %w", id, dashboard.ErrNotFound)
	}
	return art.MediaType, data, err
}
