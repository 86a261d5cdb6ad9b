package actors

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"buddi/internal/text"
)

// StrategyKind says which children a supervisor restarts when one fails.
type StrategyKind int

const (
	// OneForOne restarts only the failed child.
	OneForOne StrategyKind = iota
	// AllForOne restarts all the supervisor's children when one fails.
	AllForOne
)

// String returns "one-for-one" or "all-for-one".
func (k StrategyKind) String() string {
	switch k {
	case OneForOne:
		return "one-for-one"
	case AllForOne:
		return "all-for-one"
	default:
		return fmt.Sprintf("StrategyKind(%d)", int(k))
	}
}

// Budget allows at most MaxRestarts restarts of one child within Within; one
// more failure exhausts it. The zero Budget allows no restart at all: the first
// failure stops the child and escalates. A zero Within counts every failure
// since the child was (re)built by its supervisor.
type Budget struct {
	// MaxRestarts is how many restarts the window holds (0: none).
	MaxRestarts int
	// Within is the length of the sliding window (0: no window).
	Within time.Duration
	// Backoff is the wait before the first restart inside the window; each
	// further restart in the window waits twice the one before, at most
	// MaxBackoff. Zero restarts at once. The failed child is suspended while it
	// waits: what is sent to it waits too.
	Backoff time.Duration
}

// MaxBackoff caps the wait before a restart.
const MaxBackoff = 30 * time.Second

// wait is the backoff before the nth restart inside the window (n from 1).
func (b Budget) wait(n int) time.Duration {
	if b.Backoff <= 0 || n < 1 {
		return 0
	}
	d := b.Backoff
	for i := 1; i < n && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Strategy is how a supervisor treats a failed child. The zero Strategy is
// one-for-one with no restarts.
type Strategy struct {
	// Kind is OneForOne or AllForOne.
	Kind StrategyKind
	// Budget bounds the restarts before the supervisor gives up and escalates.
	Budget Budget
	// Contain keeps a child's spent budget inside this supervisor: the child
	// (AllForOne: every child) is stopped and a supervising actor's behaviour
	// gets ChildFailed, and nothing escalates. A conversation contains its
	// runs' failures this way.
	Contain bool
}

// String describes the strategy, e.g.
// "one-for-one, 3 restarts in 1m0s, then stop and escalate".
func (s Strategy) String() string {
	b := s.Budget
	var budget string
	switch {
	case b.MaxRestarts == 0:
		budget = "no restarts"
	case b.Within <= 0:
		budget = fmt.Sprintf("%d %s in total", b.MaxRestarts, text.Plural(b.MaxRestarts, "restart"))
	default:
		budget = fmt.Sprintf("%d %s in %s", b.MaxRestarts, text.Plural(b.MaxRestarts, "restart"), b.Within)
	}
	if b.Backoff > 0 {
		budget += fmt.Sprintf(" (backoff from %s)", b.Backoff)
	}
	then := "stop and escalate"
	if s.Contain {
		then = "stop and tell the parent"
	}
	return fmt.Sprintf("%s, %s, then %s", s.Kind, budget, then)
}

func (s Strategy) validate() error {
	switch {
	case s.Kind != OneForOne && s.Kind != AllForOne:
		return fmt.Errorf("actors: unknown strategy kind %d", int(s.Kind))
	case s.Budget.MaxRestarts < 0:
		return errors.New("actors: budget: MaxRestarts is negative")
	case s.Budget.Within < 0:
		return errors.New("actors: budget: Within is negative")
	case s.Budget.Backoff < 0:
		return errors.New("actors: budget: Backoff is negative")
	}
	return nil
}

// supervision is the actor.SupervisorStrategy of one supervisor incarnation.
// protoactor's own strategies only stop an exhausted child and never escalate,
// and treat maxNrOfRetries == 0 as "never restart"; this one keeps its own
// sliding window per child, escalates on exhaustion and reports every decision.
// Its methods run on the supervisor's goroutine only.
type supervision struct {
	sys      *System
	self     *actor.PID // the supervisor's own, set at Started
	path     string
	strategy Strategy
	failures map[string][]time.Time // child path → failure times inside the window
}

var _ actor.SupervisorStrategy = (*supervision)(nil)

// HandleFailure implements actor.SupervisorStrategy.
func (v *supervision) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	now := time.Now()
	ev := SupervisorEvent{Supervisor: v.path, Child: child.Id, Reason: reasonText(reason), At: now}

	if v.sys.isClosed() {
		// Shutting down: restarting now would race the stops.
		delete(v.failures, child.Id)
		sup.StopChildren(child)
		ev.Kind = EventStopped
		v.sys.emit(ev)
		return
	}

	times := v.failures[child.Id]
	if w := v.strategy.Budget.Within; w > 0 {
		kept := times[:0]
		for _, t := range times {
			if now.Sub(t) < w {
				kept = append(kept, t)
			}
		}
		times = kept
	}
	times = append(times, now)

	targets := []*actor.PID{child}
	if v.strategy.Kind == AllForOne {
		targets = sup.Children()
	}

	if len(times) > v.strategy.Budget.MaxRestarts {
		delete(v.failures, child.Id)
		sup.StopChildren(targets...)
		ev.Kind, ev.Restarts = EventStopped, len(times)-1
		if v.strategy.Contain {
			v.sys.forgetAll(targets)
			v.sys.emit(ev)
			if v.self != nil {
				v.sys.as.Root.Send(v.self, &childFailed{path: child.Id, reason: ev.Reason, restarts: ev.Restarts})
			}
			return
		}
		ev.Escalated = true
		v.sys.emit(ev)
		// Suspends this supervisor and sends the failure to its parent (the
		// system's guardian for a top-level supervisor).
		sup.EscalateFailure(reason, message)
		return
	}

	v.failures[child.Id] = times
	v.sys.setRestartReason(targets, ev.Reason)
	ev.Kind, ev.Restarts = EventRestarted, len(times)
	if d := v.strategy.Budget.wait(len(times)); d > 0 && v.self != nil {
		self, root := v.self, v.sys.as.Root
		time.AfterFunc(d, func() { root.Send(self, &restartLater{pids: targets}) })
	} else {
		sup.RestartChildren(targets...)
	}
	v.sys.emit(ev)
}

// forget drops the window of a child that has terminated.
func (v *supervision) forget(child string) { delete(v.failures, child) }

// guardian receives the failures that leave a top-level supervisor. Without
// it protoactor would apply its default strategy to a parentless actor
// (restart it, up to 10 times in 10 s) and nobody would hear of it. The
// guardian stops the supervisor and reports on Escalations instead.
type guardian struct{ sys *System }

var _ actor.SupervisorStrategy = (*guardian)(nil)

// HandleFailure implements actor.SupervisorStrategy. protoactor calls it on the
// failing supervisor's goroutine.
func (g *guardian) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	sup.StopChildren(child)
	ev := SupervisorEvent{
		Kind:      EventStopped,
		Child:     child.Id,
		Reason:    reasonText(reason),
		Escalated: true,
		At:        time.Now(),
	}
	g.sys.emit(ev)
	g.sys.escalate(ev)
}

func reasonText(reason any) string {
	switch r := reason.(type) {
	case error:
		return r.Error()
	case string:
		return r
	default:
		return fmt.Sprint(r)
	}
}

// restartLater carries a restart that waited out its backoff to the
// supervisor's goroutine.
type restartLater struct{ pids []*actor.PID }

// IgnoreDeadLetterLogging implements actor.IgnoreDeadLetterLogging.
func (*restartLater) IgnoreDeadLetterLogging() {}

// childFailed tells a supervisor its contained child was stopped.
type childFailed struct {
	path, reason string
	restarts     int
}

// IgnoreDeadLetterLogging implements actor.IgnoreDeadLetterLogging.
func (*childFailed) IgnoreDeadLetterLogging() {}

// ChildFailed tells a supervising actor that its child at Path failed past its
// budget (Strategy.Contain) and was stopped; Reason is the last failure.
type ChildFailed struct {
	// Path is the stopped child's path.
	Path string
	// Reason is its last failure, as text.
	Reason string
	// Restarts counts its restarts inside the budget's window before it was stopped.
	Restarts int
}
