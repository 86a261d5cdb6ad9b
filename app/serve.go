// Package app is buddi's composition root: `buddi serve` assembles the data directory,
// the database, the migrations, the queue, the supervision tree and the surfaces here, and
// takes them down again in order. It is the one place that knows every part.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/actors"
	"buddi/agents"
	"buddi/backup"
	"buddi/config"
	"buddi/core/artifact"
	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/executor"
	"buddi/core/notify"
	"buddi/core/redact"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/core/vault"
	"buddi/datadir"
	"buddi/db"
	"buddi/dbsource"
	"buddi/examples"
	"buddi/health"
	"buddi/internal/logfile"
	"buddi/internal/procenv"
	"buddi/internal/timezone"
	"buddi/metrics"
	"buddi/migrations"
	"buddi/pgcluster"
	"buddi/plugins"
	"buddi/plugins/developer"
	"buddi/plugins/email"
	"buddi/plugins/web"
	"buddi/queue"
	"buddi/runtime/account"
	"buddi/runtime/delegate"
	"buddi/runtime/live"
	"buddi/runtime/platform"
	"buddi/runtime/run"
	"buddi/scheduler"
	"buddi/sentinels"
	"buddi/supervisor"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/preview"
	"buddi/surfaces/webauth"
	"buddi/tailnet"
	"buddi/version"
)

// ErrEscalated means a failure left the top of the supervision tree: buddi stopped.
var ErrEscalated = errors.New("app: supervision escalated to the root")

// Options tune Serve; the zero value is what buddi serve uses.
type Options struct {
	// Ready is called once buddi answers /api/health, with the listener's address.
	Ready func(addr string)
	// ShutdownTimeout bounds the whole orderly stop. Default 30 s.
	ShutdownTimeout time.Duration
}

// Serve runs buddi until ctx ends (a signal) or the supervision tree gives up. It returns
// nil after an orderly stop, also when the signal came while it was still starting.
func Serve(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) error {
	err := serve(ctx, cfg, log, opts)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ErrEscalated) {
		log.Info("stopped while starting", "reason", context.Cause(ctx), "err", err)
		return nil
	}
	return err
}

func serve(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (err error) {
	started := time.Now()
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 30 * time.Second
	}
	timezone.UseHome(cfg.Home) // missions and reminders without a zone are in the one saved there
	if err := datadir.PrepareHome(cfg.Home); err != nil {
		return err
	}
	// The log also goes to <home>/logs (JSON lines, rotated), under the redaction below like
	// the terminal's: `buddi logs` reads it. Why serve ended is written there too (the
	// terminal has it from main).
	var scrub *redact.Live
	if file, ferr := logfile.Open(logfile.Dir(cfg.Home), logfile.Options{}); ferr != nil {
		log.Warn("the log file cannot be written; the log goes to the terminal only", "err", ferr)
	} else {
		defer file.Close()
		log = slog.New(logfile.Tee(log.Handler(), file))
		defer func() {
			if err != nil && ctx.Err() == nil {
				var h slog.Handler = slog.NewJSONHandler(file, nil)
				if scrub != nil {
					h = redact.NewHandler(h, scrub)
				}
				slog.New(h).Error("buddi stopped", "err", err)
			}
		}()
	}
	// The keys of the owner's credentials live in the data directory, never in the database:
	// the seal over tickets, sessions and decisions (and, below, the command line's token).
	sealKey, err := seal.Load(cfg.Home)
	if err != nil {
		return err
	}
	// Every stored secret, in its common encodings, is scrubbed from the log before a line
	// is written. A locked vault has no values to scrub and fails closed on every use.
	secrets, _, err := vault.OpenOwner(filepath.Join(cfg.Home, "vault.json"), os.Getenv)
	if err != nil {
		return err
	}
	// The key is read: it leaves the environment (and the kernel's copy of it), so nothing
	// buddi starts inherits it and /proc/<pid>/environ does not show it.
	if _, err := procenv.Forget("BUDDI_VAULT_KEY"); err != nil {
		log.Warn("BUDDI_VAULT_KEY is out of buddi's environment, but /proc still shows it", "err", err)
	}
	scrub = redact.NewLive(secrets)
	log = slog.New(redact.NewHandler(log.Handler(), scrub))
	if err := scrub.Reload(); err != nil {
		log.Warn("the vault is locked: secrets cannot be used until it opens", "err", err)
	}
	// scrub sees a change of the vault at its next use; this catches keychain entries edited outside buddi.
	stopRefresh := refreshEvery(30*time.Second, func() { _ = scrub.Reload() })
	defer stopRefresh()
	lock, err := datadir.TryLock(cfg.Home)
	if err != nil {
		return err
	}
	defer lock.Release()
	// Renewed only once this buddi holds the lock: a second serve that is refused must not
	// change the running one's token. A token that leaked ends with this start.
	cliToken, err := webauth.RenewCLIToken(cfg.Home)
	if err != nil {
		return err
	}
	metricsToken, err := webauth.MetricsToken(cfg.Home) // kept across starts: a scrape's configuration holds it
	if err != nil {
		return err
	}

	// Bind before anything slow, so a taken port fails at once and starts nothing.
	listener, err := dashboard.Listen(cfg.WebAddr())
	if err != nil {
		return err
	}
	defer listener.Close()
	previewListener, err := preview.Listen(cfg.WebHost, cfg.PreviewPort)
	if err != nil {
		return err
	}
	defer previewListener.Close()

	firstStart := cfg.Embedded() && !pgcluster.New(pgcluster.Options{Dir: cfg.ClusterDir()}).Initialized()
	src, err := dbsource.Open(ctx, cfg, dbsource.Options{Serving: true, CreateIfMissing: true, Log: log})
	if err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if cerr := src.Close(stopCtx); cerr != nil {
			log.Error("stop database", "err", cerr)
		}
	}()
	// The supervision tree is built before anything that calls into it: the hosts of
	// conversations and processes exist before the plugins and the runtime are wired to them,
	// and the queue, which hands out work, is the last actor to start (tree.Start below).
	recorder := eventlog.NewRecorder(src.Pool, log)
	defer recorder.Close()
	sys := actors.NewSystem(log, func(ev actors.SupervisorEvent) {
		var kind events.Kind
		switch ev.Kind {
		case actors.EventRestarted:
			kind = events.SupervisorRestarted
		case actors.EventStopped:
			kind = events.SupervisorStopped
		default:
			log.Error("a supervisor event of no declared kind is not recorded", "kind", ev.Kind, "child", ev.Child)
			return
		}
		recorder.Record(kind, "", events.SupervisorPayload{
			Supervisor: ev.Supervisor, Child: ev.Child, Reason: ev.Reason,
			Restarts: ev.Restarts, Escalated: ev.Escalated,
		})
	})
	// The actors stop before the pools they use close: this early defer covers a return while
	// starting, the one after the queue's pool below the orderly stop (it runs first).
	var stopOnce sync.Once
	stopActors := func() {
		stopOnce.Do(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
			defer cancel()
			if serr := sys.Shutdown(stopCtx); serr != nil {
				log.Error("stop actors", "err", serr)
			}
		})
	}
	defer stopActors()
	var parts supervisor.Parts
	if src.Cluster != nil {
		parts.Postgres = supervisor.Postgres(src.Cluster, log)
	}
	tree, err := supervisor.Build(sys, parts)
	if err != nil {
		return err
	}
	procs := supervisor.NewProcessHost(sys, tree.Workspaces, supervisor.ProcessDeps{Log: log})
	devStore := developer.NewStore(src.Pool, sealKey, nil)
	devStore.Log = log
	artifacts := artifact.NewStore(src.Pool, cfg.Home)
	previewSrv := preview.New(preview.Deps{Pool: src.Pool, Seal: sealKey, Resolve: preview.HostResolver(developer.Name, procs), Log: log,
		Refused: refusedPorts(listener.Addr(), previewListener.Addr(), cfg.DatabaseURL)})
	previewPort := previewListener.Addr().(*net.TCPAddr).Port
	reminderLimits, err := scheduler.ReminderLimitsFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	if _, err := email.Period(os.Getenv); err != nil {
		return err
	}
	presence := &dashboard.Presence{}
	// The registry is built from the manifests, which tell through notices: which tools allow
	// "remember" is read from it once it exists (before anything is told).
	var reusable func(tool string) bool
	notices := notifier(src.Pool, secrets, scrub, sealKey, presence, func(tool string) bool { return reusable != nil && reusable(tool) }, log)
	owner := tell(notices, log)
	// The installed plugins (plugins.json) stand where compiled-in ones do; one that does not
	// load is reported and everything else loads.
	installed, problems := InstalledPlugins(cfg.Home, owner, log)
	for _, p := range problems {
		log.Warn("an installed plugin does not load; everything else does", "err", p)
	}
	manifests := append(ServeManifests(src.Pool, cfg.Home, procs, previewSrv, reminderLimits, sealKey, owner, log), installed.Manifests()...)
	web.BindSecrets(manifests, secrets.Get) // web.search's hosted providers read their key from the vault
	// The email tools (drafts as artifacts, sends through the ledger) and its inbox source
	// read the accounts' app passwords from the vault.
	email.BindTools(manifests, email.Deps{Pool: src.Pool, Artifacts: artifacts, Secrets: secrets, Key: sealKey})
	email.Bind(&email.Poller{Store: email.Store{Pool: src.Pool, Key: sealKey}, Secrets: secrets})
	if firstStart {
		log.Info("applying migrations…")
	}
	// The migrations' own lines ("no migrations to run", one for each schema at every start)
	// are debug; what was applied is said once.
	applied, err := src.Migrate(ctx, slog.New(logfile.Demote(log.Handler())), Schemas(manifests)...)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	if n := countApplied(applied); n > 0 {
		log.Info("applied migrations", "count", n)
	}

	// The tailnet node starts early (it comes up in the background, and may wait for a login)
	// and stops last, after the actors that serve on it.
	var node *tailnet.Node
	if on, err := tailnetWanted(ctx, cfg, src.Pool); err != nil {
		return err
	} else if on {
		authKey := os.Getenv("TS_AUTHKEY")
		if _, err := procenv.Forget("TS_AUTHKEY"); err != nil {
			log.Warn("TS_AUTHKEY is out of buddi's environment, but /proc still shows it", "err", err)
		}
		if node, err = startTailnet(cfg, authKey, secrets, log); err != nil {
			return err
		}
		defer node.Close()
	}

	riverPool, err := db.Open(ctx, src.DSN, db.Options{Name: "buddi-queue", MaxConns: 10})
	if err != nil {
		return fmt.Errorf("open the queue's pool: %w", err)
	}
	defer riverPool.Close()
	defer stopActors()
	reg, err := registry.New(manifests...)
	if err != nil {
		return fmt.Errorf("load tools: %w", err)
	}
	reusable = telegramReusable(reg)
	insert, err := queue.InsertOnly(src.Pool)
	if err != nil {
		return err
	}
	exec := executor.New(src.Pool, reg, run.JobQueue{Inserter: insert}, log)
	exec.Policy = ownerPolicy(cfg.Home, devStore, modeStore(src.Pool, sealKey, log))
	exec.Scrub = scrub
	exec.Seal = sealKey
	// The runtime: conversations, the run loop, and the live hub the surfaces watch.
	hub := &live.Hub{Scrub: scrub}
	convs := conversation.NewStore(src.Pool)
	convs.Scrub = scrub
	agentFiles := liveCatalog(cfg.Home, reg, log)
	defer agentFiles.Close()
	catalog := agentFiles.Load
	if _, err := catalog(); err != nil {
		log.Warn("the agents do not load; runs fail until they do", "err", err)
	}
	// platform.* writes the owner's agent files and swaps the reloaded catalogue in at once.
	platform.Bind(manifests, platform.Deps{Agents: agentFiles.Config(), Catalog: catalog, Reload: agentFiles.Reload, Tools: reg,
		Plugins: func() []plugins.Manifest { return manifests }, Log: log})
	missions := &scheduler.Store{Pool: src.Pool, Insert: insert}
	watch := &sentinels.Engine{Pool: src.Pool}
	accounts := account.NewStore(src.Pool, sealKey)
	accounts.Log = log
	runner := &run.Runner{Pool: src.Pool, Conversations: convs, Executor: exec, Tools: reg, Catalog: catalog,
		Accounts: accounts, Secrets: secrets, Scrub: scrub, Insert: insert, Host: tree.Turns, Live: hub, Log: log,
		Search: nativeSearch{store: web.Store{Pool: src.Pool}, configured: web.SearchFromEnv(os.Getenv).Provider != ""},
		Paused: func(ctx context.Context, q eventlog.Querier) (bool, error) {
			paused, _, err := queue.Paused(ctx, q)
			return paused, err
		},
		Unattended: []string{"mission.report", "mission.silent", "schedule.list_mine", "schedule.cancel_mine"},
		Asked:      askOwner(owner),
		Finished: func(ctx context.Context, m run.Meta, last func() string) {
			if m.Interactive {
				return
			}
			state, err := scheduler.Finished(ctx, src.Pool, m.RunID, m.Agent, last(), owner)
			if err != nil {
				log.Warn("settle a mission's occurrence", "run", m.RunID, "err", err)
			} else if state == "silent" {
				log.Warn("a mission's run ended without mission.report or mission.silent; it counts as silent (no-decision)", "run", m.RunID)
			}
		}}
	watch.Start = sentinelWake(catalog, convs, runner)
	feeds, err := sourceActors(manifests, src.Pool, convs, runner, owner, scrub, log)
	if err != nil {
		return err
	}
	ownAgents, _ := agents.OwnerDirs(cfg.Home, os.Getenv) // where each agent's delegates.json is
	delegate.Bind(manifests, delegate.Deps{Runner: runner, Agents: agents.Config{Examples: examples.FS, AgentsDir: ownAgents}, Log: log})
	runner.Colleagues = colleagues(agents.Config{Examples: examples.FS, AgentsDir: ownAgents}, catalog, log)
	// Each package registers its own workers; the root only names the parts.
	register, periodic := queue.Wire(watch, exec, runner,
		scheduler.Jobs{Store: missions, Start: missionStarter(convs, runner), Reminders: reminderLimits, Wake: reminderWaker(convs, runner)},
		queue.DeadLetters{Pool: src.Pool, Report: func(msg string) { log.Warn("incident: " + msg); incidentTeller(owner)(msg) }},
		notify.UnknownWatch{Notifier: notices}, dailyBackup(cfg, src, log))
	traces, stopTraces := metrics.Traces(ctx, os.Getenv, log) // only with an OpenTelemetry exporter configured
	defer stopTraces()
	q, err := queue.New(riverPool, queue.Options{Log: log, Register: register, Periodic: periodic, Queues: map[string]int{run.Queue: 50}, Plugins: metrics.QueuePlugins(traces)})
	if err != nil {
		return err
	}
	queueUI, err := dashboard.QueueUI(q.Client(), log)
	if err != nil {
		log.Warn("the queue's UI is not served", "err", err)
	}
	if err := recoverAtStart(ctx, src.Pool, runner, exec, devStore, procs, log); err != nil {
		return err
	}

	qstate := &supervisor.QueueState{}
	h := &healthSource{cfg: cfg, src: src, sys: sys, queue: qstate, started: started, listener: listener.Addr().String(), vault: secrets}
	w := &wired{cfg: cfg, log: log, src: src, seal: sealKey, secrets: secrets, scrub: scrub, reg: reg, insert: insert,
		hub: hub, convs: convs, catalog: catalog, runner: runner, tree: tree, devStore: devStore, procs: procs,
		artifacts: artifacts, previewSrv: previewSrv, previewPort: previewPort, q: q, queueUI: queueUI, health: h, cliToken: cliToken, metricsToken: metricsToken, node: node, presence: presence}
	services := supervisor.Services{
		Dashboard: dashboard.Actor(listener, func() dashboard.Servable { return dashboard.NewServer(w.dashboardDeps()) }),
		Preview:   dashboard.Actor(previewListener, func() dashboard.Servable { return previewSrv }),
		Sentinels: sentinels.Children(watch, allSentinels(manifests), sentinels.Loop),
		Sources:   feeds,
		Agents: actors.Go("agent files", watchAgents(agentFiles, func(ctx context.Context) {
			sctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			stopProcessesOfRemovedAgents(sctx, catalog, devStore, recorder, log)
		})),
		Queue:      supervisor.Queue(q, qstate),
		QueueState: qstate,
	}
	services.Telegram = w.telegram()
	services.Tailnet = w.tailnet()
	// Each installed plugin's server runs under root/plugins, before the queue hands out work;
	// not in recovery mode, where plugins.json came from an archive: its commands run only
	// once the owner has been through the checklist (buddi resume, then a restart).
	if held, err := backup.InRecovery(ctx, src.Pool); err != nil || held != nil {
		if len(installed.Manifests()) > 0 {
			log.Warn("buddi is in recovery mode (or could not tell), so the installed plugins' servers are not started: their tools refuse until `buddi resume` and a restart", "err", err)
		}
	} else if _, err := installed.Start(sys, tree.Root); err != nil {
		return err
	}
	if err := tree.Start(services); err != nil {
		return err
	}
	readyCtx, cancelReady := context.WithTimeout(ctx, time.Minute)
	err = tree.AwaitQueue(readyCtx)
	cancelReady()
	if err != nil {
		return err
	}
	if err := queue.HoldIfPaused(ctx, src.Pool, q.Client()); err != nil {
		return err
	}
	if err := announceRecovery(ctx, src.Pool, log); err != nil {
		return err
	}
	if _, err := eventlog.Append(ctx, src.Pool, events.BuddiStarted, "", events.BuddiStartedPayload{
		Version: version.Version, PID: os.Getpid(), Database: src.Kind, Listener: h.listener,
		StartupMS: time.Since(started).Milliseconds(),
	}); err != nil {
		return fmt.Errorf("record %s: %w", events.BuddiStarted, err)
	}
	// The one line at info that says buddi is ready is announceSignIn's.
	log.Debug("buddi is serving", "listener", "http://"+h.listener, "database", src.Target)
	announceSignIn(ctx, src.Pool, sealKey, cfg, log.With("startup", time.Since(started).Round(time.Millisecond)))
	if opts.Ready != nil {
		opts.Ready(h.listener)
	}

	select {
	case <-ctx.Done():
		log.Info("stopping", "reason", context.Cause(ctx))
		recorder.Record(events.BuddiStopping, "", events.BuddiStoppingPayload{Reason: "signal"})
		return nil
	case ev := <-sys.Escalations():
		log.Error("the supervision tree gave up; stopping", "child", ev.Child, "reason", ev.Reason)
		return fmt.Errorf("%w: %s failed (%s)", ErrEscalated, ev.Child, ev.Reason)
	}
}

// healthSource answers /api/health from the live parts.
type healthSource struct {
	cfg      config.Config
	src      *dbsource.Source
	sys      *actors.System
	queue    *supervisor.QueueState
	started  time.Time
	listener string
	telegram bool            // a bot token is set: the surface runs
	tailnet  *tailnetServing // the tailnet node, when it is on
	vault    vault.Vault     // the vault the agents' keys are read from
}

// Report builds the health report.
func (h *healthSource) Report(ctx context.Context) health.Report {
	now := time.Now()
	rep := health.Report{
		Status:        "ok",
		Version:       version.Version,
		Pid:           os.Getpid(),
		StartedAt:     h.started.UTC(),
		UptimeSeconds: int64(now.Sub(h.started).Seconds()),
		Listener:      h.listener,
		Database:      health.Database{Source: h.src.Kind, Target: h.src.Target},
		CheckedAt:     now.UTC(),
	}
	if v, err := dbsource.ServerVersion(ctx, h.src.Pool); err != nil {
		rep.Database.Error = err.Error()
		rep.Problems = append(rep.Problems, "the database does not answer")
	} else {
		rep.Database.Reachable, rep.Database.Version = true, v
	}
	rep.Queue.Running = h.queue.Running()
	if !rep.Queue.Running {
		rep.Problems = append(rep.Problems, "the queue is not running")
	}
	if st, err := queue.ReadStats(ctx, h.src.Pool); err != nil {
		rep.Queue.Error = err.Error()
	} else {
		rep.Queue.Jobs, rep.Queue.Failed = st.Jobs, st.Failed
		rep.Queue.Queues = []health.QueueInfo{}
		for _, qi := range st.Queues {
			rep.Queue.Queues = append(rep.Queue.Queues, health.QueueInfo{Name: qi.Name, Paused: qi.Paused})
		}
	}
	for _, n := range h.sys.Tree() {
		rep.Actors = append(rep.Actors, health.Actor{
			Path: n.Path, Parent: n.Parent, Supervisor: n.Supervisor, Strategy: n.Strategy,
			Restarts: n.Restarts, State: n.State,
		})
		if n.State != "running" {
			rep.Problems = append(rep.Problems, fmt.Sprintf("actor %s is %s", n.Path, n.State))
		}
	}
	rep.Recovery = recoveryNote(ctx, h.src.Pool)
	rep.Vault = health.VaultOf(h.vault) // a locked vault is the owner's to fix (buddi doctor), not a degraded buddi
	if h.telegram {
		rep.Telegram = telegramHealth(ctx, h.src.Pool)
		if rep.Telegram.Down {
			rep.Problems = append(rep.Problems, "Telegram refused the bot token: set a new one with `buddi telegram setup`")
		}
	}
	if h.tailnet != nil {
		rep.Tailnet = h.tailnet.health(ctx)
		if rep.Tailnet.Problem != "" {
			rep.Problems = append(rep.Problems, rep.Tailnet.Problem)
		}
	}
	if d, err := health.DiskAt(h.cfg.Home); err == nil {
		rep.Disk = d
		switch d.State {
		case health.DiskFull:
			rep.Problems = append(rep.Problems, d.Problem)
		case health.DiskLow:
			rep.Warnings = append(rep.Warnings, d.Problem)
		}
	}
	if len(rep.Problems) > 0 {
		rep.Status = "degraded"
	}
	return rep
}

// refreshEvery calls fn on a ticker until the returned stop is called.
func refreshEvery(d time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fn()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// countApplied is how many migrations one Migrate applied.
func countApplied(applied []migrations.Applied) int {
	n := 0
	for _, a := range applied {
		n += len(a.Versions)
	}
	return n
}

// SignInTTL is how long the sign-in link buddi serve prints at start stays usable.
const SignInTTL = 15 * time.Minute

// announceSignIn logs where buddi answers with a single-use sign-in link: every request to
// the dashboard needs the owner's session, on loopback too.
func announceSignIn(ctx context.Context, pool *pgxpool.Pool, key seal.Key, cfg config.Config, log *slog.Logger) {
	base := "http://" + cfg.WebAddr() + "/"
	ticket, err := webauth.IssueFor(ctx, pool, key, webauth.PurposeSession, "", SignInTTL)
	if err != nil {
		log.Warn("buddi is ready at "+base+"; a sign-in link could not be made: run `buddi dashboard` for one", "err", err)
		return
	}
	log.Info("buddi is ready at " + base + " (sign in within 15 minutes: " + base + "auth?ticket=" + ticket + " ; later, `buddi dashboard` prints a new link)")
}
