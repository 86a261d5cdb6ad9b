package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/actors"
	"buddi/agents"
	"buddi/config"
	"buddi/core/artifact"
	"buddi/core/conversation"
	"buddi/core/executor"
	"buddi/core/redact"
	"buddi/core/registry"
	"buddi/core/seal"
	"buddi/core/vault"
	"buddi/dbsource"
	"buddi/metrics"
	"buddi/migrations"
	"buddi/plugins/developer"
	"buddi/plugins/memory"
	"buddi/queue"
	"buddi/runtime/live"
	"buddi/runtime/run"
	"buddi/scheduler"
	"buddi/supervisor"
	"buddi/surfaces/dashboard"
	"buddi/surfaces/preview"
	"buddi/surfaces/telegram"
	"buddi/tailnet"
)

// wired holds the parts serve has built, for the surfaces that are wired from them.
type wired struct {
	cfg          config.Config
	log          *slog.Logger
	src          *dbsource.Source
	seal         seal.Key
	secrets      vault.Vault
	scrub        *redact.Live
	reg          *registry.Registry
	insert       executor.Inserter
	presence     *dashboard.Presence // the dashboard pages open now: notifyOwner's presence
	hub          *live.Hub
	convs        *conversation.Store
	catalog      func() (*agents.Catalog, error)
	runner       *run.Runner
	tree         *supervisor.Tree
	devStore     *developer.Store
	procs        *supervisor.ProcessHost
	artifacts    *artifact.Store
	previewSrv   *preview.Server
	previewPort  int
	q            *queue.Queue
	queueUI      http.Handler // River's own UI; nil when it could not be built
	health       *healthSource
	cliToken     string
	metricsToken string        // opens GET /metrics only
	node         *tailnet.Node // nil with the tailnet off
}

// recoverAtStart settles what a killed buddi left, before the queue fetches a job (the data
// directory's lock proves no other buddi works): its runs, its processes, its executions,
// and every other job it was working.
func recoverAtStart(ctx context.Context, pool *pgxpool.Pool, runner *run.Runner, exec *executor.Executor, devStore *developer.Store, procs *supervisor.ProcessHost, log *slog.Logger) error {
	if n, err := runner.Recover(ctx); err != nil {
		return err
	} else if n > 0 {
		log.Warn("runs were working when buddi stopped; they carry on now", "count", n)
	}
	// What a killed buddi left running gets its actor (or, a stranger behind a recycled pid,
	// is left alone) before anything can start a process.
	if n, err := devStore.AdoptSurvivors(ctx, procs); err != nil {
		return err
	} else if n > 0 {
		log.Warn("processes were still running from before; buddi supervises them again", "count", n)
	}
	if n, err := exec.Recover(ctx); err != nil {
		return err
	} else if n > 0 {
		log.Warn("actions were executing when buddi stopped; they are unknown now and wait for your review", "count", n)
	}
	// Whatever else the dead process was working (sweeps, wakes, occurrences) runs again now.
	if n, err := queue.RescueDead(ctx, pool); err != nil {
		return err
	} else if n > 0 {
		log.Info("jobs were running when buddi stopped; they run again now", "count", n)
	}
	return nil
}

// dashboardDeps are the dashboard's parts; the tailnet's dashboard is the same with its gate.
func (w *wired) dashboardDeps() dashboard.Deps {
	h, runner, convs, tree, src, log := w.health, w.runner, w.convs, w.tree, w.src, w.log
	return dashboard.Deps{Health: h.Report, Pool: src.Pool, Queue: run.JobQueue{Inserter: w.insert}, Presence: w.presence, Tools: w.reg, Log: log,
		Addr: h.listener, Chat: &dashboard.Chat{Conversations: convs, Catalog: w.catalog, Live: w.hub,
			Available: func(ctx context.Context, agent string) (bool, string) {
				p, err := runner.Check(ctx, w.secrets, agent)
				if err != nil {
					return false, "its account could not be read"
				}
				if p != nil {
					return false, p.Sentence
				}
				return true, ""
			},
			Start: func(surface string) conversation.StartRun {
				return runner.StartNow(run.Meta{Surface: surface, Interactive: true})
			},
			Stop: func(ctx context.Context, conv string) error {
				c, err := convs.Get(ctx, conv)
				if err != nil {
					return dashboard.ErrNothingToStop
				}
				if c.ActiveRun == "" || !tree.Turns.Stop(conv, c.ActiveRun, run.ErrStopped) {
					return dashboard.ErrNothingToStop
				}
				return nil
			},
			Deliver: func(ctx context.Context, sent conversation.Sent, surface string) {
				runner.Deliver(ctx, run.StartArgs{RunID: sent.RunID, ConversationID: sent.Conversation.ID, Agent: sent.Conversation.Agent, Surface: surface, Interactive: true})
			},
			TakeOffer: func(ctx context.Context, id int64) (conversation.Sent, error) {
				return convs.TakeOffer(ctx, id, "dashboard", runner.StartNext(run.Meta{Surface: "dashboard", Interactive: true}))
			}},
		Jobs: failedJobs{pool: src.Pool, q: w.q}, Developer: developerSettings{store: w.devStore, tailnet: w.node != nil},
		Previews: previews{srv: w.previewSrv, port: w.previewPort}, Artifacts: artifactFiles{w.artifacts}, Files: w.artifacts, FilesScrub: scrubber(w.scrub),
		Remote: w.cfg.Remote(), PublicHost: w.cfg.WebHost, Seal: w.seal, CLIToken: w.cliToken, MetricsToken: w.metricsToken, WebFetches: webFetches{pool: src.Pool, scrub: w.scrub},
		Accounts: runner.Accounts, Vault: w.secrets, Probe: dashboard.AccountProbe{Transport: runner.Transport},
		Missions: &scheduler.Store{Pool: src.Pool, Insert: w.insert},
		Watch:    w.watchDeps(), Phone: w.phoneDeps(), MCP: w.mcpHandler(), Modes: modeStore(src.Pool, w.seal, log),
		Memory:  memoryPage{store: memory.NewStore(src.Pool), scrub: w.scrub},
		Email:   emailPage{pool: src.Pool, scrub: w.scrub},
		Metrics: metrics.Handler(metrics.Sources{DB: src.Pool, RiverSchema: migrations.RiverSchema, TelegramLastPoll: w.telegramLastPoll(), Log: log}), QueueUI: w.queueUI}
}

// telegramLastPoll reads when Telegram was last polled, for /metrics; nil without a bot.
func (w *wired) telegramLastPoll() func(ctx context.Context) (time.Time, error) {
	if !w.health.telegram {
		return nil
	}
	return (&telegram.Store{Pool: w.src.Pool}).LastPoll
}

// telegram is the Telegram surface's actor when a bot token is set, nil otherwise.
func (w *wired) telegram() func() actors.Actor {
	token, err := w.secrets.Get("TELEGRAM_BOT_TOKEN")
	if err != nil || token == "" {
		return nil
	}
	bot := telegram.New(telegram.Deps{API: TelegramAPI(token), Store: &telegram.Store{Pool: w.src.Pool, Scrub: w.scrub, Key: w.seal, Log: w.log}, Conversations: w.convs,
		Start: w.runner.StartNext(run.Meta{Surface: telegram.Surface, Interactive: true}), Catalog: w.catalog, Live: w.hub,
		Decide: telegramDecide(w.src.Pool, w.insert, w.reg, w.seal), Reusable: telegramReusable(w.reg), Log: w.log, Mode: telegramMode(modeStore(w.src.Pool, w.seal, w.log)),
		Artifacts: func(ctx context.Context, name, mediaType string, data []byte) (string, error) {
			a, err := w.artifacts.Save(ctx, artifact.Artifact{Agent: "owner", Name: name, MediaType: mediaType, Source: "sent on Telegram"}, data)
			return a.ID, err
		}})
	w.health.telegram = true
	// A refused token leaves the surface idle and down (it says so); any other end of the poll
	// loop restarts it.
	return actors.Go("telegram poller", bot.Run, actors.Quiet(func(err error) bool { return errors.Is(err, telegram.ErrRevoked) }))
}

// tailnet is the tailnet surface's actor when the node runs, nil otherwise: a listener that
// fails restarts it; the node itself belongs to serve.
func (w *wired) tailnet() func() actors.Actor {
	if w.node == nil {
		return nil
	}
	tn := &tailnetServing{node: w.node, gate: tailnet.NewGate(w.node.WhoIs, w.node.Names, w.src.Pool, w.seal, w.log), pool: w.src.Pool, seal: w.seal,
		previews: w.previewSrv, previewPort: w.previewPort, devStore: w.devStore, procs: w.procs, log: w.log}
	tn.dashboard = func() *dashboard.Server {
		d := w.dashboardDeps()
		d.Tailnet = &dashboard.Tailnet{Gate: tn.gate}
		return dashboard.NewServer(d)
	}
	w.health.tailnet = tn
	return actors.Go("tailnet", tn.serve)
}

// scrubber is l as a redact.Scrubber, or nil when there is none (no vault): a nil *Live in
// an interface would not compare equal to nil.
func scrubber(l *redact.Live) redact.Scrubber {
	if l == nil {
		return nil
	}
	return l
}
