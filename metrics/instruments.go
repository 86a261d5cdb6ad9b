package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// registry holds the instruments buddi's packages record into; Handler adds what is read at
// scrape time.
var registry = prometheus.NewRegistry()

// Outcomes of a run (RunFinished).
const (
	// RunAnswered is a run that ended with an answer.
	RunAnswered = "answered"
	// RunFailed is a run that ended without one.
	RunFailed = "failed"
)

var (
	runsStarted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "buddi_runs_started_total",
		Help: "Runs started: an agent pinned its account and model for a conversation's turn.",
	})
	runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "buddi_runs_finished_total",
		Help: "Runs ended, by outcome (answered, failed).",
	}, []string{"outcome"})
	turns = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "buddi_turns_total",
		Help: "Model turns: one request to the model answered (what an agent's turn budget counts).",
	})
	toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "buddi_tool_calls_total",
		Help: "Tool calls that ended, by tier (auto, session, gated; none when refused before a tier) and outcome (succeeded, failed, unknown, refused, expired).",
	}, []string{"tier", "outcome"})
	providerSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "buddi_provider_request_duration_seconds",
		Help:    "How long one model request took, its retries included, by provider wire.",
		Buckets: []float64{0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320},
	}, []string{"provider"})
	providerErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "buddi_provider_errors_total",
		Help: "Model requests that failed, by provider wire and class (transient, permanent, unknown).",
	}, []string{"provider", "class"})
	actorRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "buddi_actor_restarts_total",
		Help: "Actors restarted after a failure, by supervising subtree (root, root/surfaces, root/conversations, …).",
	}, []string{"supervisor"})
	actorStops = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "buddi_actor_stops_total",
		Help: "Failed actors stopped instead of restarted (their restart budget was spent, or buddi was stopping), by supervising subtree.",
	}, []string{"supervisor"})
	queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "buddi_queue_wait_seconds",
		Help:    "How long a job waited between when it was due and when a worker took it, by kind.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"kind"})
	jobSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "buddi_job_duration_seconds",
		Help:    "How long a worker took with a job, by kind and outcome (ok, error).",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1200},
	}, []string{"kind", "outcome"})
)

// providerClasses are the classes of a failed model request, each counted from zero once its
// provider has been used.
var providerClasses = []string{"transient", "permanent", "unknown"}

func init() {
	registry.MustRegister(runsStarted, runsFinished, turns, toolCalls, providerSeconds, providerErrors,
		actorRestarts, actorStops, queueWait, jobSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	runsFinished.WithLabelValues(RunAnswered)
	runsFinished.WithLabelValues(RunFailed)
}

// RunStarted counts a run that started.
func RunStarted() { runsStarted.Inc() }

// RunFinished counts a run that ended with outcome (RunAnswered or RunFailed).
func RunFinished(outcome string) { runsFinished.WithLabelValues(outcome).Inc() }

// ModelStep records one request to the model over wire (anthropic, openai): how long it took
// and, when err is not nil, its failure of class (transient, permanent, unknown); a request
// answered is a turn.
func ModelStep(wire string, took time.Duration, err error, class string) {
	if wire == "" {
		wire = "unknown"
	}
	providerSeconds.WithLabelValues(wire).Observe(took.Seconds())
	for _, c := range providerClasses {
		providerErrors.WithLabelValues(wire, c) // each class of a provider in use reads 0 until it fails
	}
	if err != nil {
		providerErrors.WithLabelValues(wire, class).Inc()
		return
	}
	turns.Inc()
}

// ToolCall counts a tool call that ended: its tier ("" when it was refused before it had one)
// and its outcome.
func ToolCall(tier, outcome string) {
	if tier == "" {
		tier = "none"
	}
	toolCalls.WithLabelValues(tier, outcome).Inc()
}

// ActorDecision counts a supervisor's decision about a failed child: restarted, or stopped.
// supervisor is the deciding supervisor's path; only its first two segments are kept (a
// conversation's or a workspace's own supervisor counts under its subtree).
func ActorDecision(restarted bool, supervisor string) {
	sub := subtree(supervisor)
	if restarted {
		actorRestarts.WithLabelValues(sub).Inc()
		return
	}
	actorStops.WithLabelValues(sub).Inc()
}

// subtree is path's first two segments ("root/conversations/c1" → "root/conversations"), or
// "system" for a failure that left a top-level supervisor.
func subtree(path string) string {
	if path == "" {
		return "system"
	}
	parts := strings.SplitN(path, "/", 3)
	return strings.Join(parts[:min(len(parts), 2)], "/")
}
