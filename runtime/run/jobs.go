package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"buddi/core/executor"
	"buddi/runtime/live"
	"buddi/runtime/provider"
)

// Queue is the River queue runs are worked on.
const Queue = "runs"

// StartArgs is the job of a new run: it answers the conversation's latest turn.
type StartArgs struct {
	RunID          string `json:"run_id"`            // the new run's id
	ConversationID string `json:"conversation_id"`   // the conversation it answers in
	Agent          string `json:"agent"`             // the agent's id
	Surface        string `json:"surface,omitempty"` // where the owner wrote; empty when unattended
	// Interactive: the owner is waiting (a message on a surface); otherwise the run is
	// unattended (a mission, a sentinel's wake) and gets the long horizon.
	Interactive bool `json:"interactive"`
	// Recovery marks a job enqueued at start for a run whose job died with the process (that
	// job stays running until River rescues it, and is cancelled); zero otherwise.
	Recovery int64 `json:"recovery,omitempty"`
	// Delegation, for a colleague's run asked through agent.delegate, says who asked.
	Delegation *Delegation `json:"delegation,omitempty"`
}

// Kind is River's name for the job.
func (StartArgs) Kind() string { return "run.start" }

// InsertOpts makes the job unique per run, on the runs queue.
func (StartArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Enqueue puts a run's start job in tx with its horizon's attempt count.
func Enqueue(ctx context.Context, tx pgx.Tx, insert executor.Inserter, args StartArgs) error {
	opts := args.InsertOpts()
	opts.MaxAttempts = HorizonFor(args.Interactive, provider.Transient).Attempts
	if _, err := insert.InsertTx(ctx, tx, args, &opts); err != nil {
		return fmt.Errorf("enqueue run %s: %w", args.RunID, err)
	}
	return nil
}

// Register adds the runtime's workers: a run's start and its resumption after an action.
func (r *Runner) Register(w *river.Workers) error {
	if err := river.AddWorkerSafely(w, &StartWorker{Runner: r}); err != nil {
		return err
	}
	return river.AddWorkerSafely(w, &ResumeWorker{Runner: r})
}

// Horizon is how long and how often a run is retried.
type Horizon struct {
	Within   time.Duration   // from the job's creation
	Attempts int             // in all, the first included
	Delays   []time.Duration // before attempt 2, 3, …; the last repeats
}

// The two horizons (seed 004, "Queue, concurrency, recovery").
var (
	Interactive = Horizon{Within: 15 * time.Minute, Attempts: 3, Delays: []time.Duration{5 * time.Second, 30 * time.Second}}
	Unattended  = Horizon{Within: 6 * time.Hour, Attempts: 8, Delays: []time.Duration{
		30 * time.Second, 2 * time.Minute, 8 * time.Minute, 20 * time.Minute, 45 * time.Minute, 90 * time.Minute, 2 * time.Hour}}
)

// HorizonFor is the horizon of a run: an unknown failure is retried on the short horizon only.
func HorizonFor(interactive bool, class provider.Class) Horizon {
	if interactive || class == provider.Unknown {
		return Interactive
	}
	return Unattended
}

// Next decides after a failed attempt (attempt counts from 1) of a job created at created:
// when to try again, or why not (a sentence for the log; "" with a time).
func (h Horizon) Next(attempt int, created, now time.Time, class provider.Class, retryAt time.Time) (time.Time, string) {
	if class == provider.Permanent {
		return time.Time{}, "the failure is permanent"
	}
	if attempt >= h.Attempts {
		return time.Time{}, fmt.Sprintf("all %d attempts failed", h.Attempts)
	}
	i := attempt - 1
	if i >= len(h.Delays) {
		i = len(h.Delays) - 1
	}
	next := now.Add(h.Delays[i])
	if retryAt.After(next) {
		next = retryAt
	}
	if end := created.Add(h.Within); next.After(end) {
		if retryAt.After(end) {
			return time.Time{}, fmt.Sprintf("the provider said to come back at %s, after this run's %s horizon", retryAt.Format(time.RFC3339), h.Within)
		}
		return time.Time{}, fmt.Sprintf("the next attempt would fall after this run's %s horizon", h.Within)
	}
	return next, ""
}

// StartWorker works StartArgs jobs.
type StartWorker struct {
	river.WorkerDefaults[StartArgs]
	Runner *Runner // runs the turns
	next   retries
}

// Timeout bounds one attempt of a run: long enough for its tool calls and model steps.
func (w *StartWorker) Timeout(*river.Job[StartArgs]) time.Duration { return JobTimeout }

// JobTimeout bounds one attempt of a run job. The queue's rescue of stuck jobs waits longer.
const JobTimeout = 40 * time.Minute

// Work runs the turn as the run actor of its conversation, or joins it when the owner's
// message delivered it there already (Deliver).
func (w *StartWorker) Work(ctx context.Context, job *river.Job[StartArgs]) error {
	a := job.Args
	m := Meta{RunID: a.RunID, ConversationID: a.ConversationID, Agent: a.Agent, Surface: a.Surface, Interactive: a.Interactive}
	err := w.Runner.host(ctx, m, w.Runner.startTurn(a), true)
	return w.Runner.settle(ctx, m, job.JobRow, err, &w.next)
}

// startTurn is a new run's turn: pinned first (its account and model, in run.started), then
// run. Pinning inside the turn makes it the run actor's: a delivered turn and its job never
// pin twice.
func (r *Runner) startTurn(args StartArgs) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		m := Meta{RunID: args.RunID, ConversationID: args.ConversationID, Agent: args.Agent, Surface: args.Surface, Interactive: args.Interactive}
		o, err := r.open(ctx, m, &args)
		if err != nil {
			return err
		}
		return r.stopped(ctx, o.m, r.turnFrom(ctx, o))
	}
}

// Deliverer is a Host that can start a run's first turn before its job is fetched.
type Deliverer interface {
	// Deliver starts the first turn of run runID in conversation without waiting for it; the
	// run's job joins it when it comes. The turn gets at most limit.
	Deliver(conversation, runID string, limit time.Duration, turn func(ctx context.Context) error) error
	// Join is Run for a run's first turn: it joins the delivered one, or takes its result.
	Join(ctx context.Context, conversation, runID string, turn func(ctx context.Context) error) error
}

// Deliver starts the run args describe at once (unless the owner paused all work) in its
// conversation's actor, when the Host can (a message the owner waits on need not wait for the
// queue to fetch its job). The job, in the queue already, stays the durable record: it joins
// the run, or takes its result, and after a crash runs it. A Host that cannot deliver leaves
// it to the job.
func (r *Runner) Deliver(ctx context.Context, args StartArgs) {
	d, ok := r.Host.(Deliverer)
	if !ok || args.RunID == "" {
		return
	}
	// The owner paused all work: the run waits in the queue with the rest. StartNow read
	// whether work was paused in the message's own transaction.
	_, cleared := r.cleared.LoadAndDelete(args.RunID)
	if r.Paused != nil && !cleared {
		if paused, err := r.Paused(ctx, r.Pool); err != nil || paused {
			return
		}
	}
	if err := d.Deliver(args.ConversationID, args.RunID, JobTimeout, r.startTurn(args)); err != nil {
		r.log().Warn("a run waits for its job: it could not be started at once", "run", args.RunID, "err", err)
	}
}

// host hands the run's turn to its conversation's actor and waits for its end. A run whose
// code crashed past its actor's restart budget fails for good, saying so to the owner.
func (r *Runner) host(ctx context.Context, m Meta, turn func(ctx context.Context) error, first bool) error {
	var err error
	if d, ok := r.Host.(Deliverer); ok && first {
		err = d.Join(ctx, m.ConversationID, m.RunID, turn)
	} else {
		err = r.Host.Run(ctx, m.ConversationID, m.RunID, turn)
	}
	var crash interface{ RunCrashed() (int, string) }
	if errors.As(err, &crash) {
		restarts, _ := crash.RunCrashed()
		return &Problem{Kind: "crashed", Agent: m.Agent, Err: err, Sentence: fmt.Sprintf(
			"This turn failed: it crashed %d times in buddi's own code, so buddi stopped retrying it (the details are in the log); send your message again to try once more.", restarts+1)}
	}
	return err
}

// turn is the run's turn as its actor runs it: a turn the owner stopped ends as a
// permanent problem, so it is closed at once and saying so.
func (r *Runner) turn(m Meta) func(ctx context.Context) error {
	return func(ctx context.Context) error { return r.stopped(ctx, m, r.Turn(ctx, m)) }
}

// stopped is err of m's turn, a permanent problem when the owner stopped the turn.
func (r *Runner) stopped(ctx context.Context, m Meta, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), ErrStopped) {
		return &Problem{Kind: "stopped", Agent: m.Agent, Err: err, Sentence: "You stopped this turn."}
	}
	return err
}

// ErrStopped is the cause a turn's context carries when the owner stopped it.
var ErrStopped = errors.New("the owner stopped the turn")

// NextRetry is the time settle chose for the failed attempt.
func (w *StartWorker) NextRetry(job *river.Job[StartArgs]) time.Time { return w.next.take(job.ID) }

// ResumeWorker works ResumeArgs jobs: the action a run waited on has ended.
type ResumeWorker struct {
	river.WorkerDefaults[ResumeArgs]
	Runner *Runner // runs the turns
	next   retries
}

// Timeout bounds one attempt.
func (w *ResumeWorker) Timeout(*river.Job[ResumeArgs]) time.Duration { return JobTimeout }

// Work resumes the run where it stopped.
func (w *ResumeWorker) Work(ctx context.Context, job *river.Job[ResumeArgs]) error {
	m, found, err := w.Runner.readMeta(ctx, job.Args.RunID)
	if err == nil && !found {
		return river.JobCancel(fmt.Errorf("run %s has no run.started event: nothing to resume", job.Args.RunID))
	}
	if err == nil {
		w.Runner.publish(liveResumed(m, job.Args.ActionID))
		err = w.Runner.host(ctx, m, w.Runner.turn(m), false)
	}
	return w.Runner.settle(ctx, m, job.JobRow, err, &w.next)
}

// NextRetry is the time settle chose for the failed attempt.
func (w *ResumeWorker) NextRetry(job *river.Job[ResumeArgs]) time.Time {
	return w.next.take(job.ID)
}

// settle decides what a failed attempt becomes: a retry at a time inside the run's horizon,
// or a closed turn. A cancelled job context (the lease was lost, buddi is stopping) is
// neither: the job runs again and the run picks up where the transcript says.
func (r *Runner) settle(ctx context.Context, m Meta, job *rivertype.JobRow, err error, next *retries) error {
	if err == nil {
		return nil
	}
	last := job.Attempt >= job.MaxAttempts // River discards the job after this attempt, whatever we say
	if ctx.Err() != nil && !last {
		return err
	}
	class := Classify(err)
	retryAt, _ := provider.RetryAt(err)
	h := HorizonFor(m.Interactive, class)
	at, why := h.Next(job.Attempt, job.CreatedAt, r.now(), class, retryAt)
	if why == "" && last {
		why = fmt.Sprintf("all %d attempts of its job failed", job.MaxAttempts)
	}
	if why == "" {
		if r.Delay != nil {
			now := r.now()
			at = now.Add(r.Delay(at.Sub(now)))
		}
		r.log().Warn("a run attempt failed; it is tried again", "run", m.RunID, "attempt", job.Attempt, "class", class.String(), "at", at, "err", err)
		next.put(job.ID, at)
		// What the attempt streamed is void: the surfaces drop it, and say when it goes on.
		r.publish(live.Event{ConversationID: m.ConversationID, RunID: m.RunID, Type: "run.retrying", Until: &at,
			Text: fmt.Sprintf("%s buddi tries again at %s.", strings.TrimSpace(Sentence(err)), at.Local().Format("15:04:05"))})
		return err
	}
	if m.ConversationID == "" { // it failed before it was pinned to a conversation
		return river.JobCancel(err)
	}
	if cerr := r.Close(ctx, m, err); cerr != nil {
		return errors.Join(err, fmt.Errorf("close the failed turn: %w", cerr))
	}
	// The owner was told where they asked (run.failed, with a retry when honest). A turn that
	// failed for want of setup is a step for the owner to take, and an interactive turn is
	// settled there: neither is also a failed job. An unattended run's failure is.
	var setup *Problem
	if m.Interactive || (errors.As(err, &setup) && setup.Settled()) {
		r.log().Info("a failed turn was told to the owner; its job is done", "run", m.RunID, "why", why)
		return nil
	}
	final := fmt.Errorf("%s: %w", why, err)
	if last {
		return final // River discards it: a failed job, the owner's to retry or dismiss
	}
	return river.JobCancel(final)
}

// retries hands the time settle chose to River's NextRetry, which asks right after Work.
type retries struct{ m sync.Map }

func (r *retries) put(id int64, at time.Time) { r.m.Store(id, at) }
func (r *retries) take(id int64) time.Time {
	v, ok := r.m.LoadAndDelete(id)
	if !ok {
		return time.Time{}
	}
	return v.(time.Time)
}
