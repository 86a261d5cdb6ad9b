// Package doctor examines an installation and says, for each problem, one sentence on what
// to do. It reads; the only thing it may start is the embedded database, when buddi is not
// serving, and it stops that again.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"buddi/config"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/dbsource"
	"buddi/health"
	"buddi/migrations"
	"buddi/pgcluster"
	"buddi/queue"
	"buddi/surfaces/webauth"
)

// Exit codes, the same across the CLI.
const (
	ExitOK      = 0 // healthy
	ExitProblem = 1 // a problem was found
	ExitUsage   = 2 // the command line was wrong
	ExitDoFirst = 3 // something must be done first (not set up, nothing to run on)
)

// Check is one line of the report.
type Check struct {
	// Name is what was checked: "data directory", "listener", "supervision tree",
	// "database", "migrations" or "queue".
	Name string `json:"name"`
	// OK is false for a problem.
	OK bool `json:"ok"`
	// Detail is what was found, in one line.
	Detail string `json:"detail"`
	// Fix is one sentence on what to do, for a problem.
	Fix string `json:"fix,omitempty"`
}

// Report is everything doctor found.
type Report struct {
	// Healthy is true when every check is OK.
	Healthy bool `json:"healthy"`
	// ExitCode is the command's exit code: ExitOK, ExitProblem or ExitDoFirst.
	ExitCode int `json:"exit_code"`
	// Home is the data directory examined.
	Home string `json:"home"`
	// Checks are the lines of the report, in the order they were made.
	Checks []Check `json:"checks"`
	// Database is the database part; nil when the database could not be opened.
	Database *health.Database `json:"database,omitempty"`
	// Migrations are where each schema stands; nil when not read.
	Migrations []migrations.Status `json:"migrations,omitempty"`
	// Queue is the queue's state; nil when it was not read.
	Queue *queue.Stats `json:"queue,omitempty"`
	// FailedJobs are the latest 50 jobs River discarded, newest first; only when there are any.
	FailedJobs []FailedJob `json:"failed_jobs,omitempty"`
	// Serving is the running buddi's health report; nil when none answers.
	Serving *health.Report `json:"serving,omitempty"`
	// SupervisorEvents are the latest supervisor decisions from the event log.
	SupervisorEvents []eventlog.Event `json:"supervisor_events,omitempty"`
}

// FailedJob is a job River discarded.
type FailedJob struct {
	ID        int64     `json:"id"`         // River's job id
	Kind      string    `json:"kind"`       // River's name for the job, e.g. "action.execute"
	Attempts  int       `json:"attempts"`   // how many times it was tried
	LastError string    `json:"last_error"` // the last attempt's error; empty if none was recorded
	FailedAt  time.Time `json:"failed_at"`  // when River finalized it, else when it was created
}

func (r *Report) add(c Check) { r.Checks = append(r.Checks, c) }

// Run examines the installation that cfg describes; schemas are the plugins' migrations,
// checked beside core's and River's.
func Run(ctx context.Context, cfg config.Config, schemas ...migrations.Set) *Report {
	r := &Report{Home: cfg.Home}
	defer r.finish()

	r.checkHome(cfg.Home)
	r.checkListener(ctx, cfg)

	src, err := dbsource.Open(ctx, cfg, dbsource.Options{})
	if err != nil {
		c := Check{Name: "database", Detail: err.Error()}
		var noBin *pgcluster.NoBinariesError
		var notInit *dbsource.NotInitialisedError
		switch {
		case errors.As(err, &notInit):
			c.Detail, c.Fix = "no database yet in "+cfg.Home, "run `buddi serve` once to set it up"
			r.ExitCode = ExitDoFirst
		case errors.As(err, &noBin):
			c.Detail, c.Fix = "no PostgreSQL server found", "install PostgreSQL (apt-get install postgresql) or set DATABASE_URL"
			r.ExitCode = ExitDoFirst
		default:
			c.Fix = "check that the database runs and that DATABASE_URL is right"
		}
		r.add(c)
		return r
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = src.Close(stopCtx)
	}()
	dbh := &health.Database{Source: src.Kind, Target: src.Target}
	r.Database = dbh
	if v, err := dbsource.ServerVersion(ctx, src.Pool); err != nil {
		dbh.Error = err.Error()
		r.add(Check{Name: "database", Detail: src.Target + " does not answer", Fix: "check that the database runs"})
		return r
	} else {
		dbh.Reachable, dbh.Version = true, v
		r.add(Check{Name: "database", OK: true, Detail: fmt.Sprintf("%s, PostgreSQL %s, %s", src.Kind, v, src.Target)})
	}

	sts, err := migrations.Check(ctx, src.Pool, schemas...)
	if err != nil {
		r.add(Check{Name: "migrations", Detail: err.Error(), Fix: "run `buddi db migrate`"})
		return r
	}
	r.Migrations = sts
	current, riverCurrent := true, true
	for _, st := range sts {
		if st.Pending() {
			current = false
			riverCurrent = riverCurrent && st.Schema != migrations.RiverSchema
			r.add(Check{Name: "migrations", Detail: fmt.Sprintf("schema %s is at version %d of %d", st.Schema, st.Current, st.Target), Fix: "run `buddi db migrate`"})
		}
	}
	if !riverCurrent { // the queue's own tables are not there to read
		return r
	}
	if current {
		r.add(Check{Name: "migrations", OK: true, Detail: "current"})
	}

	st, err := queue.ReadStats(ctx, src.Pool)
	if err != nil {
		r.add(Check{Name: "queue", Detail: err.Error(), Fix: "run `buddi db migrate`"})
		return r
	}
	r.Queue = &st
	// Failed jobs still counted: not dismissed, and not older than 14 days.
	counted, cerr := queue.Failed(ctx, src.Pool, false, 500)
	if cerr != nil {
		counted = nil
	}
	if paused, since, err := queue.Paused(ctx, src.Pool); err == nil && paused {
		r.add(Check{Name: "work", OK: true, Detail: "paused by you since " + since.Local().Format("Jan 2 15:04") + ": nothing runs until `buddi resume`"})
	}
	if len(counted) > 0 {
		r.FailedJobs = failedJobs(ctx, src)
		r.add(Check{Name: "queue", Detail: fmt.Sprintf("%d failed jobs wait for you", len(counted)),
			Fix: "see them by cause with `buddi jobs`, then `buddi jobs retry --all` or `buddi jobs dismiss --all`"})
	} else {
		r.add(Check{Name: "queue", OK: true, Detail: fmt.Sprintf("%d queues, %d jobs available, %d running, none failed", len(st.Queues), st.Jobs["available"], st.Jobs["running"])})
	}
	r.SupervisorEvents, _ = eventlog.List(ctx, src.Pool, eventlog.Filter{Kind: events.SupervisorRestarted.Family(), Newest: true, Limit: 10})
	return r
}

func (r *Report) checkHome(home string) {
	fi, err := os.Stat(home)
	switch {
	case errors.Is(err, os.ErrNotExist):
		r.add(Check{Name: "data directory", Detail: home + " does not exist", Fix: "run `buddi serve` once to set buddi up there, or set BUDDI_HOME"})
		r.ExitCode = ExitDoFirst
		return
	case err != nil || !fi.IsDir():
		r.add(Check{Name: "data directory", Detail: fmt.Sprintf("%s is not a usable directory (%v)", home, err), Fix: "set BUDDI_HOME to a directory you can write"})
		return
	}
	probe, err := os.CreateTemp(home, ".doctor-*")
	if err != nil {
		r.add(Check{Name: "data directory", Detail: home + " is not writable", Fix: "make it writable by this user, or set BUDDI_HOME to another directory"})
		return
	}
	probe.Close()
	_ = os.Remove(probe.Name())
	r.add(Check{Name: "data directory", OK: true, Detail: fmt.Sprintf("%s (mode %v)", home, fi.Mode().Perm())})
}

// ErrNotServing means nothing answers on the dashboard's address.
var ErrNotServing = errors.New("buddi is not running")

// Serving asks the running buddi for its health report: ErrNotServing when nothing answers,
// another error when something else holds the address.
func Serving(ctx context.Context, cfg config.Config) (health.Report, error) {
	url := "http://" + cfg.WebAddr() + "/api/health"
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(hctx, http.MethodGet, url, nil)
	if err := webauth.CheckListener(cfg.WebAddr()); err != nil {
		return health.Report{}, err // another account holds the port: it gets no token
	}
	if token, err := webauth.ReadCLIToken(cfg.Home); err == nil {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return health.Report{}, ErrNotServing
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return health.Report{}, fmt.Errorf("the buddi at %s refused this command line's token: run the command with the BUDDI_HOME that buddi serve uses", cfg.WebAddr())
	}
	var rep health.Report
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&rep) != nil || rep.Version == "" {
		return health.Report{}, fmt.Errorf("%s is held by another program", cfg.WebAddr())
	}
	return rep, nil
}

func (r *Report) checkListener(ctx context.Context, cfg config.Config) {
	rep, err := Serving(ctx, cfg)
	if errors.Is(err, ErrNotServing) {
		r.add(Check{Name: "listener", Detail: "nothing answers on " + cfg.WebAddr(), Fix: "start buddi with `buddi serve`"})
		r.add(Check{Name: "supervision tree", OK: true, Detail: "not running"})
		return
	}
	if err != nil {
		r.add(Check{Name: "listener", Detail: err.Error(), Fix: "stop it, or set BUDDI_WEB_PORT to a free port"})
		return
	}
	r.Serving = &rep
	r.add(Check{Name: "listener", OK: true, Detail: fmt.Sprintf("buddi %s (pid %d) serving on http://%s for %ds", rep.Version, rep.Pid, rep.Listener, rep.UptimeSeconds)})
	if tn := rep.Tailnet; tn != nil {
		switch {
		case tn.Problem != "":
			r.add(Check{Name: "tailnet", Detail: tn.Problem, Fix: tailnetFix(tn)})
		case tn.State != "running":
			r.add(Check{Name: "tailnet", Detail: "the tailnet node is " + tn.State + ", not on the tailnet yet", Fix: "wait a moment and run buddi doctor again; if it stays, read buddi's log (service=tailnet)"})
		case tn.Owner == "":
			r.add(Check{Name: "tailnet", Detail: fmt.Sprintf("%s (%s) answers no one: the owner's tailnet login is not set", tn.URL, strings.Join(tn.IPs, ", ")),
				Fix: "run `buddi tailnet owner LOGIN`, or open a link from `buddi dashboard --tailnet` on your phone"})
		default:
			r.add(Check{Name: "tailnet", OK: true, Detail: fmt.Sprintf("%s at %s (%s), owner %s", tn.State, tn.URL, strings.Join(tn.IPs, ", "), tn.Owner)})
		}
	}
	if tg := rep.Telegram; tg != nil {
		switch {
		case tg.Down:
			r.add(Check{Name: "telegram", Detail: "Telegram refused the bot token (401): the phone surface is down", Fix: "set a new token with `buddi telegram setup` and restart buddi"})
		case tg.SinceLastPollSeconds < 0:
			r.add(Check{Name: "telegram", OK: true, Detail: "connecting: no poll has succeeded yet"})
		case tg.SinceLastPollSeconds > 120:
			r.add(Check{Name: "telegram", Detail: fmt.Sprintf("no successful poll for %ds", tg.SinceLastPollSeconds), Fix: "check the machine's network; buddi keeps retrying"})
		default:
			r.add(Check{Name: "telegram", OK: true, Detail: fmt.Sprintf("last poll %ds ago", tg.SinceLastPollSeconds)})
		}
	}
	restarts, down := 0, []string{}
	for _, a := range rep.Actors {
		restarts += a.Restarts
		if a.State != "running" {
			down = append(down, a.Path+" is "+a.State)
		}
	}
	if len(down) > 0 {
		r.add(Check{Name: "supervision tree", Detail: fmt.Sprint(down), Fix: "restart buddi, and read the supervisor events below for the cause"})
		return
	}
	r.add(Check{Name: "supervision tree", OK: true, Detail: fmt.Sprintf("%d actors running, %d restarts since start", len(rep.Actors), restarts)})
}

func failedJobs(ctx context.Context, src *dbsource.Source) []FailedJob {
	rows, err := src.Pool.Query(ctx, `
		SELECT id, kind, attempt, COALESCE(errors[array_length(errors, 1)]->>'error', ''), COALESCE(finalized_at, created_at)
		FROM river.river_job WHERE state = 'discarded' ORDER BY id DESC LIMIT 50`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []FailedJob
	for rows.Next() {
		var j FailedJob
		if rows.Scan(&j.ID, &j.Kind, &j.Attempts, &j.LastError, &j.FailedAt) == nil {
			out = append(out, j)
		}
	}
	return out
}

func (r *Report) finish() {
	r.Healthy = true
	for _, c := range r.Checks {
		if !c.OK {
			r.Healthy = false
		}
	}
	if r.ExitCode == ExitOK && !r.Healthy {
		r.ExitCode = ExitProblem
	}
}

// tailnetFix says what to do about a tailnet node that is not serving.
func tailnetFix(tn *health.Tailnet) string {
	switch {
	case tn.LoginURL != "" && tn.Error == "":
		return "open " + tn.LoginURL + " to log buddi's node in, or set an auth key with `buddi tailnet authkey`"
	case tn.State == "needs-login":
		return "set a valid auth key with `buddi tailnet authkey` (or TS_AUTHKEY) and restart buddi"
	default:
		return "read buddi's log for the tailnet node, or turn it off with `buddi tailnet off`"
	}
}
