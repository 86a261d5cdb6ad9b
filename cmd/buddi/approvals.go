package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"buddi/app"
	"buddi/core/action"
	"buddi/core/executor"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/dbsource"
	"buddi/queue"
	runtime "buddi/runtime/run"
)

type approvalsCmd struct {
	List    approvalsListCmd   `cmd:"" default:"withargs" help:"List approvals (pending ones by default)."`
	Show    approvalsShowCmd   `cmd:"" help:"Show one action and its approval, rendered from the action."`
	Approve approvalsDecideCmd `cmd:"" help:"Approve an action; buddi serve executes it."`
	Reject  approvalsRejectCmd `cmd:"" help:"Reject an action."`
}

// openActions opens the database for an approvals command.
func openActions(env *runEnv) (*dbsource.Source, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	return dbsource.Open(env.ctx, cfg, dbsource.Options{Log: env.log})
}

type approvalsListCmd struct {
	All   bool     `help:"List every state, not only pending."`
	State []string `help:"Only these states (pending, approved, executing, succeeded, failed, unknown, rejected, expired, refused)." enum:"pending,approved,executing,succeeded,failed,unknown,rejected,expired,refused"`
	JSON  bool     `help:"Print JSON."`
}

func (c approvalsListCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	f := action.Filter{Limit: 200}
	switch {
	case len(c.State) > 0:
		for _, s := range c.State {
			f.States = append(f.States, action.State(s))
		}
	case !c.All:
		f.States = []action.State{action.Pending}
	}
	recs, err := action.List(env.ctx, src.Pool, f)
	if err != nil {
		return err
	}
	names := loadHandles()
	if c.JSON {
		if recs == nil {
			recs = []action.Record{}
		}
		return names.writeJSON(env, recs)
	}
	if len(recs) == 0 {
		fmt.Fprintln(env.stdout, "nothing waits for you")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tTOOL\tAGENT\tASKED\tSUMMARY")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Approval.State, r.Tool, names.of(r.Agent), r.CreatedAt.Local().Format("01-02 15:04"), r.Envelope.Summary)
	}
	return tw.Flush()
}

type approvalsShowCmd struct {
	ID   string `arg:"" help:"The action's id."`
	JSON bool   `help:"Print JSON."`
}

func (c approvalsShowCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	rec, err := action.Get(env.ctx, src.Pool, c.ID)
	if err != nil {
		return notFound(err)
	}
	names := loadHandles()
	if c.JSON {
		return names.writeJSON(env, rec)
	}
	fmt.Fprint(env.stdout, rec.PreviewBy(names.of(rec.Agent)))
	return nil
}

type approvalsDecideCmd struct {
	ID       string            `arg:"" help:"The action's id."`
	Pick     map[string]string `help:"Answer a declared choice: --pick from=me@example.com."`
	Reason   string            `help:"A note kept with the decision."`
	Remember string            `help:"Also allow this tool for this agent from now on: in this conversation or in all (for tools that allow it)." enum:",conversation,all" default:""`
	JSON     bool              `help:"Print JSON."`
}

func (c approvalsDecideCmd) Run(env *runEnv) error {
	return decide(env, action.Decision{ActionID: c.ID, Approve: true, Picks: c.Pick, Reason: c.Reason, Remember: action.Remember(c.Remember)}, c.JSON)
}

type approvalsRejectCmd struct {
	ID     string `arg:"" help:"The action's id."`
	Reason string `help:"Why, kept with the decision."`
	JSON   bool   `help:"Print JSON."`
}

func (c approvalsRejectCmd) Run(env *runEnv) error {
	return decide(env, action.Decision{ActionID: c.ID, Reason: c.Reason}, c.JSON)
}

func decide(env *runEnv, d action.Decision, asJSON bool) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	insert, err := queue.InsertOnly(src.Pool)
	if err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	tools, err := registry.New(app.Manifests(src.Pool, cfg.Home, nil)...)
	if err != nil {
		return err
	}
	key, err := seal.Load(cfg.Home)
	if err != nil {
		return err
	}
	d.Surface = "terminal"
	rec, err := executor.Decide(env.ctx, src.Pool, runtime.JobQueue{Inserter: insert}, tools, key, d)
	var ad *action.AlreadyDecidedError
	switch {
	case errors.As(err, &ad):
		return &exitError{code: 1, err: err}
	case errors.Is(err, action.ErrNotFound):
		return notFound(err)
	case errors.Is(err, action.ErrExpired), errors.Is(err, action.ErrForged), errors.Is(err, action.ErrBadPick), errors.Is(err, action.ErrNotReusable), errors.Is(err, action.ErrBadRemember):
		return &exitError{code: 1, err: err}
	case err != nil:
		return err
	}
	if asJSON {
		return loadHandles().writeJSON(env, rec)
	}
	verb := "rejected"
	if d.Approve {
		verb = "approved; buddi serve executes it"
	}
	fmt.Fprintf(env.stdout, "%s %s: %s\n", rec.ID, verb, strings.TrimSpace(rec.Envelope.Summary))
	return nil
}

func notFound(err error) error {
	return &exitError{code: 1, err: fmt.Errorf("%w: list them with `buddi approvals list --all`", err)}
}
