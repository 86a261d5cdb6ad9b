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

	"buddi/agents"
	"buddi/backup"
	"buddi/config"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/vault"
	"buddi/datadir"
	"buddi/dbsource"
	"buddi/health"
	"buddi/internal/bytesize"
	"buddi/internal/timezone"
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

// Status is how a check came out.
type Status string

// The statuses of a check. A failure is something the owner must fix (exit 1); a warning is
// listed, with what to do, and leaves the exit code 0.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one line of the report.
type Check struct {
	// Name is what was checked: "data directory", "listener", "vault", "agent @dev",
	// "time zone", "telegram", "tailnet", "supervision tree", "database", "migrations",
	// "queue", "approvals", "work" or "email <account>".
	Name string `json:"name"`
	// Status is ok, warn or fail.
	Status Status `json:"status"`
	// Sentence is what was found, in one sentence.
	Sentence string `json:"sentence"`
	// Fix is one sentence on what to do; empty when the check is ok.
	Fix string `json:"fix,omitempty"`
	// Fixed says what `doctor --fix` did about it; empty when it did nothing.
	Fixed string `json:"fixed,omitempty"`
}

// Report is everything doctor found.
type Report struct {
	// Healthy is true when no check failed (warnings may be listed).
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
	// Disk is the free space where the home is; nil when it was not measured.
	Disk *health.Disk `json:"disk,omitempty"`
	// Serving is the running buddi's health report; nil when none answers.
	Serving *health.Report `json:"serving,omitempty"`
	// Agents are the agents and whether each can answer, as the running buddi (else this
	// command line) sees them.
	Agents []Agent `json:"agents,omitempty"`
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

func (r *Report) ok(name, sentence string) {
	r.add(Check{Name: name, Status: OK, Sentence: sentence})
}

func (r *Report) warn(name, sentence, fix string) {
	r.add(Check{Name: name, Status: Warn, Sentence: sentence, Fix: fix})
}

func (r *Report) fail(name, sentence, fix string) {
	r.add(Check{Name: name, Status: Fail, Sentence: sentence, Fix: fix})
}

// Options are what Run needs besides the configuration.
type Options struct {
	// Schemas are the plugins' migrations, checked beside core's and River's.
	Schemas []migrations.Set
	// Zone is the owner's time zone: the one saved in the home, else the one this machine
	// names (timezone.Owner).
	Zone timezone.Zone
	// Vault is the vault as this command line opens it; nil when it could not be opened
	// (VaultErr says why). Asked only when no buddi serves: a running buddi is asked for its own.
	Vault vault.Vault
	// VaultErr is why the vault could not be opened, when Vault is nil.
	VaultErr error
	// Catalog loads the agents; used only when no buddi serves (a running one lists its own).
	Catalog func() (*agents.Catalog, error)
	// Fix makes Run do the safe repairs (Repair) and say what it did.
	Fix bool
}

// Run examines the installation that cfg describes.
func Run(ctx context.Context, cfg config.Config, o Options) *Report {
	r := &Report{Home: cfg.Home}
	defer r.finish()

	r.checkHome(cfg.Home, o.Fix)
	r.checkDisk(cfg.Home)
	r.checkListener(ctx, cfg)
	if r.Serving != nil {
		r.checkServerVault(r.Serving)
	} else {
		r.checkLocalVault(o)
	}
	r.checkZone(cfg.Home, o.Zone, o.Fix)

	src, err := dbsource.Open(ctx, cfg, dbsource.Options{})
	if err != nil {
		c := Check{Name: "database", Status: Fail, Sentence: err.Error()}
		var noBin *pgcluster.NoBinariesError
		var notInit *dbsource.NotInitialisedError
		var version *pgcluster.VersionError
		switch {
		case errors.As(err, &version):
			// The sentence says what to install, or to run buddi db upgrade.
			c.Sentence = "the database was made by another PostgreSQL than the one installed."
			c.Fix = version.Error()
			r.ExitCode = ExitDoFirst
		case errors.As(err, &notInit):
			c.Sentence, c.Fix = "there is no database yet in "+cfg.Home+".", "Run `buddi serve` once to set it up."
			r.ExitCode = ExitDoFirst
		case errors.As(err, &noBin):
			c.Sentence, c.Fix = "no PostgreSQL server was found.", "Install PostgreSQL (apt-get install postgresql) or set DATABASE_URL."
			r.ExitCode = ExitDoFirst
		default:
			c.Fix = "Check that the database runs and that DATABASE_URL is right."
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
	v, err := dbsource.ServerVersion(ctx, src.Pool)
	if err != nil {
		dbh.Error = err.Error()
		r.fail("database", src.Target+" does not answer.", "Check that the database runs.")
		return r
	}
	dbh.Reachable, dbh.Version = true, v
	r.ok("database", fmt.Sprintf("%s, PostgreSQL %s, %s.", src.Kind, v, src.Target))

	sts, err := migrations.Check(ctx, src.Pool, o.Schemas...)
	if err != nil {
		r.fail("migrations", "the schemas could not be read: "+err.Error()+".", "Run `buddi db migrate`.")
		return r
	}
	r.Migrations = sts
	current, coreCurrent, riverCurrent := true, true, true
	for _, st := range sts {
		if st.Pending() {
			current = false
			riverCurrent = riverCurrent && st.Schema != migrations.RiverSchema
			coreCurrent = coreCurrent && st.Schema != "core"
			r.fail("migrations", fmt.Sprintf("schema %s is at version %d of %d.", st.Schema, st.Current, st.Target), "Run `buddi db migrate`.")
		}
	}
	if current {
		r.ok("migrations", "every schema is current.")
	}
	if coreCurrent {
		r.checkAgents(ctx, cfg, src, o)
		r.checkTelegramPaired(ctx, src)
		r.checkApprovals(ctx, src)
		r.checkEmail(ctx, src)
	}
	if !riverCurrent { // the queue's own tables are not there to read
		return r
	}

	st, err := queue.ReadStats(ctx, src.Pool)
	if err != nil {
		r.fail("queue", "the queue could not be read: "+err.Error()+".", "Run `buddi db migrate`.")
		return r
	}
	r.Queue = &st
	// Failed jobs still counted: not dismissed, and not older than 14 days.
	counted, cerr := queue.Failed(ctx, src.Pool, false, 500)
	if cerr != nil {
		counted = nil
	}
	if paused, since, err := queue.Paused(ctx, src.Pool); err == nil && paused {
		if list, err := backup.ReadChecklist(ctx, src.Pool); err == nil && list.Recovery != nil {
			r.warn("recovery", fmt.Sprintf("restored from %s (taken %s): nothing unattended runs; %d approved %s wait to run, %d %s an unknown outcome.",
				list.Recovery.Archive, list.Recovery.TakenAt.Local().Format("Jan 2 15:04"), len(list.Approved), plural(len(list.Approved), "action", "actions"),
				len(list.Unknown), plural(len(list.Unknown), "effect has", "effects have")), "Go through the checklist of `buddi recovery`, then run `buddi resume`.")
		} else {
			r.ok("work", "paused by you since "+since.Local().Format("Jan 2 15:04")+": nothing runs until `buddi resume`.")
		}
	}
	if len(counted) > 0 {
		r.FailedJobs = failedJobs(ctx, src)
		r.fail("queue", fmt.Sprintf("%d failed %s wait for you.", len(counted), plural(len(counted), "job", "jobs")),
			"See them by cause with `buddi jobs`, then `buddi jobs retry --all` or `buddi jobs dismiss --all`.")
	} else {
		r.ok("queue", fmt.Sprintf("%d queues, %d jobs available, %d running, none failed.", len(st.Queues), st.Jobs["available"], st.Jobs["running"]))
	}
	r.SupervisorEvents, _ = eventlog.List(ctx, src.Pool, eventlog.Filter{Kind: events.SupervisorRestarted.Family(), Newest: true, Limit: 10})
	return r
}

// checkHome checks the data directory; with fix, it creates a missing one (0700, as buddi
// serve would) and takes away what others may do in one they could enter.
func (r *Report) checkHome(home string, fix bool) {
	fi, err := os.Stat(home)
	if errors.Is(err, os.ErrNotExist) && fix {
		if err := datadir.PrepareHome(home); err != nil {
			r.add(Check{Name: "data directory", Status: Fail, Sentence: err.Error(), Fix: "Set BUDDI_HOME to a directory you can write."})
			return
		}
		r.add(Check{Name: "data directory", Status: OK, Sentence: home + " (mode 0700).", Fixed: "created " + home + " with mode 0700"})
		return
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		r.fail("data directory", home+" does not exist.", "Run `buddi serve` once to set buddi up there (or `buddi doctor --fix` to create it), or set BUDDI_HOME.")
		r.ExitCode = ExitDoFirst
		return
	case err != nil || !fi.IsDir():
		r.fail("data directory", fmt.Sprintf("%s is not a usable directory (%v).", home, err), "Set BUDDI_HOME to a directory you can write.")
		return
	}
	probe, err := os.CreateTemp(home, ".doctor-*")
	if err != nil {
		r.fail("data directory", home+" is not writable.", "Make it writable by this user, or set BUDDI_HOME to another directory.")
		return
	}
	probe.Close()
	_ = os.Remove(probe.Name())
	mode := fi.Mode().Perm()
	if mode&0o007 != 0 {
		// The group bits are left alone: as root they are the ACL's mask, which gives the
		// postgres account its way in.
		if fix {
			if err := os.Chmod(home, mode&^0o007); err == nil {
				r.add(Check{Name: "data directory", Status: OK, Sentence: fmt.Sprintf("%s (mode %04o).", home, mode&^0o007),
					Fixed: fmt.Sprintf("took away what others may do in %s (mode %04o, was %04o)", home, mode&^0o007, mode)})
				return
			}
		}
		r.fail("data directory", fmt.Sprintf("%s has mode %04o: every account on this machine may enter it.", home, mode),
			fmt.Sprintf("Run `chmod o-rwx %s` (or `buddi doctor --fix`).", home))
		return
	}
	r.ok("data directory", fmt.Sprintf("%s (mode %04o).", home, mode))
}

// checkDisk says how much room is left where the home is: full fails (every write of
// buddi's, and of its database when embedded, fails), nearly full warns.
func (r *Report) checkDisk(home string) {
	if _, err := os.Stat(home); err != nil {
		return // checkHome has said what is wrong with it
	}
	d, err := health.DiskAt(home)
	if err != nil {
		r.warn("disk", err.Error()+".", "")
		return
	}
	r.Disk = d
	free := bytesize.String(d.FreeBytes)
	switch d.State {
	case health.DiskFull:
		r.fail("disk", fmt.Sprintf("the disk that holds %s is full: %s free.", home, free),
			"Free some space there: buddi cannot save anything (a message, an approval, a run) until then.")
	case health.DiskLow:
		r.warn("disk", fmt.Sprintf("the disk that holds %s is nearly full: %s free of %s.", home, free, bytesize.String(d.TotalBytes)),
			"Free some space there before buddi's writes start to fail.")
	default:
		r.ok("disk", fmt.Sprintf("%s free of %s.", free, bytesize.String(d.TotalBytes)))
	}
}

// ErrNotServing means nothing answers on the dashboard's address.
var ErrNotServing = errors.New("buddi is not running")

// Serving asks the running buddi for its health report: ErrNotServing when nothing answers,
// another error when something else holds the address.
func Serving(ctx context.Context, cfg config.Config) (health.Report, error) {
	var rep health.Report
	if err := ask(ctx, cfg, "/api/health", &rep); err != nil {
		return health.Report{}, err
	}
	if rep.Version == "" {
		return health.Report{}, fmt.Errorf("%s is held by another program", cfg.WebAddr())
	}
	return rep, nil
}

// ask GETs path from the running buddi with the command line's token and decodes the
// answer into out.
func ask(ctx context.Context, cfg config.Config, path string, out any) error {
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(hctx, http.MethodGet, "http://"+cfg.WebAddr()+path, nil)
	if err := webauth.CheckListener(cfg.WebAddr()); err != nil {
		return err // another account holds the port: it gets no token
	}
	if token, err := webauth.ReadCLIToken(cfg.Home); err == nil {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ErrNotServing
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("the buddi at %s refused this command line's token: run the command with the BUDDI_HOME that buddi serve uses", cfg.WebAddr())
	}
	// /api/health answers 503 when buddi is degraded, with the report as its body.
	degraded := resp.StatusCode == http.StatusServiceUnavailable && path == "/api/health"
	if resp.StatusCode != http.StatusOK && !degraded {
		var e struct{ Error string }
		if json.NewDecoder(resp.Body).Decode(&e) == nil && e.Error != "" {
			return fmt.Errorf("%s answers %s: %s", cfg.WebAddr(), resp.Status, e.Error)
		}
		return fmt.Errorf("%s answers %s for %s: is it buddi?", cfg.WebAddr(), resp.Status, path)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s is held by another program", cfg.WebAddr())
	}
	return nil
}

func (r *Report) checkListener(ctx context.Context, cfg config.Config) {
	rep, err := Serving(ctx, cfg)
	if errors.Is(err, ErrNotServing) {
		r.fail("listener", "nothing answers on "+cfg.WebAddr()+".", "Start buddi with `buddi serve`.")
		return
	}
	if err != nil {
		r.fail("listener", err.Error()+".", "Stop it, or set BUDDI_WEB_PORT to a free port.")
		return
	}
	r.Serving = &rep
	r.ok("listener", fmt.Sprintf("buddi %s (pid %d) serving on http://%s for %ds.", rep.Version, rep.Pid, rep.Listener, rep.UptimeSeconds))
	r.checkTailnet(rep.Tailnet)
	r.checkTelegramPoll(rep.Telegram)
	restarts, down := 0, []string{}
	for _, a := range rep.Actors {
		restarts += a.Restarts
		if a.State != "running" {
			down = append(down, a.Path+" is "+a.State)
		}
	}
	if len(down) > 0 {
		r.fail("supervision tree", strings.Join(down, ", ")+".", "Restart buddi, and read the supervisor events below for the cause.")
		return
	}
	r.ok("supervision tree", fmt.Sprintf("%d actors running, %d restarts since start.", len(rep.Actors), restarts))
}

func (r *Report) checkTailnet(tn *health.Tailnet) {
	switch {
	case tn == nil:
		r.ok("tailnet", "off: the dashboard is reached on this machine only (`buddi tailnet on` puts it on your tailnet).")
	case tn.Problem != "":
		r.fail("tailnet", tn.Problem, tailnetFix(tn))
	case tn.State != "running":
		r.warn("tailnet", "the tailnet node is "+tn.State+", not on the tailnet yet.", "Wait a moment and run `buddi doctor` again; if it stays, read buddi's log (service=tailnet).")
	case tn.Owner == "":
		r.fail("tailnet", fmt.Sprintf("%s (%s) answers no one: the owner's tailnet login is not set.", tn.URL, strings.Join(tn.IPs, ", ")),
			"Run `buddi tailnet owner LOGIN`, or open a link from `buddi dashboard --tailnet` on your phone.")
	default:
		r.ok("tailnet", fmt.Sprintf("%s at %s (%s), owner %s.", tn.State, tn.URL, strings.Join(tn.IPs, ", "), tn.Owner))
	}
}

func (r *Report) checkTelegramPoll(tg *health.Telegram) {
	switch {
	case tg == nil:
		r.ok("telegram", "off: no bot token is set (`buddi telegram setup` puts buddi on your phone).")
	case tg.Down:
		r.fail("telegram", "Telegram refused the bot token (401): the phone surface is down.", "Set a new token with `buddi telegram setup` and restart buddi.")
	case tg.SinceLastPollSeconds < 0:
		r.ok("telegram", "connecting: no poll has succeeded yet.")
	case tg.SinceLastPollSeconds > 120:
		r.fail("telegram", fmt.Sprintf("no poll of Telegram has succeeded for %ds.", tg.SinceLastPollSeconds), "Check the machine's network; buddi keeps retrying.")
	default:
		r.ok("telegram", fmt.Sprintf("last poll %ds ago.", tg.SinceLastPollSeconds))
	}
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

// finish sets Healthy and the exit code: a failure is ExitProblem unless something must be
// done first; warnings leave it ExitOK.
func (r *Report) finish() {
	r.Healthy = true
	for _, c := range r.Checks {
		if c.Status == Fail {
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
		return "Open " + tn.LoginURL + " to log buddi's node in, or set an auth key with `buddi tailnet authkey`."
	case tn.State == "needs-login":
		return "Set a valid auth key with `buddi tailnet authkey` (or TS_AUTHKEY) and restart buddi."
	default:
		return "Read buddi's log for the tailnet node, or turn it off with `buddi tailnet off`."
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
