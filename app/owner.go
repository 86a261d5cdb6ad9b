package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

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

func (j failedJobs) Failed(ctx context.Context, all bool) (dashboard.FailedJobs, error) {
	jobs, err := queue.Failed(ctx, j.pool, all, 200)
	if err != nil {
		return dashboard.FailedJobs{}, err
	}
	if jobs == nil {
		jobs = []queue.FailedJob{}
	}
	return dashboard.FailedJobs{Failed: jobs, Causes: queue.Group(jobs, time.Now())}, nil
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

// Cancel gives a job up over River's JobCancel, as `buddi jobs cancel` does: a job still
// queued, retrying or running is cancelled. A failed job (River leaves a finalized one as it
// is) is marked cancelled and kept on record out of the counts, so Home no longer asks about
// it; a retry from Activity still brings it back.
func (j failedJobs) Cancel(ctx context.Context, id int64) (string, error) {
	row, err := j.q.Client().JobCancel(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return "", fmt.Errorf("no job %d: %w", id, dashboard.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("cancel job %d: %w", id, err)
	}
	switch row.State {
	case rivertype.JobStateCompleted:
		return string(row.State), fmt.Errorf("job %d has completed, so there is nothing to cancel: %w", id, dashboard.ErrNotFound)
	case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
		if _, err := j.pool.Exec(ctx, `UPDATE river.river_job SET state = 'cancelled' WHERE id = $1 AND state = 'discarded'`, id); err != nil {
			return "", fmt.Errorf("cancel job %d: %w", id, err)
		}
		if err := queue.Dismiss(ctx, j.pool, id, "dashboard: cancelled"); err != nil {
			return "", fmt.Errorf("cancel job %d: %w", id, err)
		}
		return string(rivertype.JobStateCancelled), nil
	}
	return string(row.State), nil
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

func (d developerSettings) Settings(ctx context.Context) (dashboard.DeveloperSettings, error) {
	out := dashboard.DeveloperSettings{Sentence: developer.WorkspaceSafety, Workspaces: []dashboard.DeveloperWorkspace{},
		Processes: []dashboard.DeveloperProcess{}, Allowed: []dashboard.AllowedCommand{},
		Tailnet: dashboard.TailnetSwitch{Node: d.tailnet, Sentence: TailnetSentence}}
	wss, err := d.store.Workspaces(ctx)
	if err != nil {
		return out, err
	}
	if out.Tailnet.Previews, err = d.store.TailnetPreviews(ctx); err != nil {
		return out, err
	}
	for _, w := range wss {
		if w.Refused != "" { // not one buddi set: no workspace (logged, and recorded as developer.forged)
			continue
		}
		mode, err := d.store.Mode(ctx, w.Agent)
		if err != nil {
			return out, err
		}
		out.Workspaces = append(out.Workspaces, dashboard.DeveloperWorkspace{Agent: w.Agent, Directory: w.Directory, Mode: string(mode)})
	}
	procs, err := d.store.Processes(ctx, "")
	if err != nil {
		return out, err
	}
	for _, p := range procs {
		out.Processes = append(out.Processes, dashboard.DeveloperProcess{ID: p.ID, Agent: p.Agent, Name: p.Name, Pid: p.Pid, Argv: p.Argv,
			Cwd: p.Cwd, Port: p.Port, LogPath: p.LogPath, StartedAt: p.StartedAt, Running: p.Running, State: p.State, Restarts: p.Restarts, Note: p.Note})
	}
	allowed, err := d.store.ListRemembered(ctx, "")
	if err != nil {
		return out, err
	}
	for _, a := range allowed {
		if a.Refused != "" { // allows nothing
			continue
		}
		out.Allowed = append(out.Allowed, dashboard.AllowedCommand{ID: a.ID, Agent: a.Agent, Workspace: a.Workspace, Command: strings.Join(a.Argv, " "), Prefix: a.Prefix})
	}
	return out, nil
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
