package actors

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"buddi/internal/logfile"
	"buddi/metrics"
)

// escalationBuffer is how many escalations wait for a reader before more are
// dropped (and logged).
const escalationBuffer = 16

// System is one supervision tree on its own protoactor actor system. Its
// methods are safe for concurrent use by callers outside the tree; none of them
// may be called from inside an Actor's Receive except Send and Tree.
type System struct {
	as          *actor.ActorSystem
	log         *slog.Logger
	sink        EventSink
	guardian    *guardian
	escalations chan SupervisorEvent
	final       sync.Once

	// spawning counts spawns between claim and commit; Shutdown waits for them
	// so that every actor it snapshots has a PID.
	spawning sync.WaitGroup

	mu      sync.Mutex
	nodes   map[string]*node
	tops    []*node
	gen     uint64
	closed  bool // Shutdown has begun
	escDone bool // escalations is closed
}

// NewSystem starts an empty System. protoactor's own logging goes to log too
// (with lib=protoactor), so its lines join ours; a nil log discards. A nil sink
// is allowed.
func NewSystem(log *slog.Logger, sink EventSink) *System {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With(slog.String("service", "actors"))
	s := &System{
		log:         log,
		sink:        sink,
		nodes:       map[string]*node{},
		escalations: make(chan SupervisorEvent, escalationBuffer),
	}
	s.guardian = &guardian{sys: s}
	// The library's own info lines ("actor system started") are debug: the owner's log says
	// what buddi does, and the tree's decisions are logged by this package.
	lib := slog.New(logfile.Demote(log.Handler()))
	s.as = actor.NewActorSystem(actor.WithLoggerFactory(func(as *actor.ActorSystem) *slog.Logger {
		return lib.With(slog.String("lib", "protoactor"), slog.String("system", as.ID))
	}))
	s.as.EventStream.Subscribe(s.onEvent)
	return s
}

// Send delivers msg to the actor without waiting. A message to an actor that
// has stopped is lost (protoactor's dead letters). A nil ref or msg is dropped.
func (s *System) Send(to *Ref, msg any) {
	if to == nil || msg == nil {
		s.log.Warn("send: nil ref or message dropped", slog.Any("to", to))
		return
	}
	s.as.Root.Send(to.pid, msg)
}

// Escalations delivers the failures that left a top-level supervisor: the
// system has stopped that supervisor and its subtree, and the process should
// shut down. The channel is buffered and never blocks the system (an
// escalation nobody has room for is logged and dropped); it is closed when
// Shutdown returns.
func (s *System) Escalations() <-chan SupervisorEvent { return s.escalations }

func (s *System) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// emit logs a decision and hands it to the sink.
func (s *System) emit(ev SupervisorEvent) {
	level := slog.LevelWarn
	if ev.Kind == EventStopped {
		level = slog.LevelError
	}
	s.log.Log(context.Background(), level, ev.Kind,
		slog.String("supervisor", ev.Supervisor),
		slog.String("child", ev.Child),
		slog.String("reason", ev.Reason),
		slog.Int("restarts", ev.Restarts),
		slog.Bool("escalated", ev.Escalated))
	metrics.ActorDecision(ev.Kind == EventRestarted, ev.Supervisor)
	if s.sink == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("event sink panicked", slog.Any("panic", r))
		}
	}()
	s.sink(ev)
}

func (s *System) escalate(ev SupervisorEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.escDone {
		return
	}
	select {
	case s.escalations <- ev:
	default:
		s.log.Error("escalation dropped: nobody reads Escalations", slog.String("child", ev.Child))
	}
}

// onEvent answers our own messages that ended in protoactor's dead letters, so
// their senders learn at once instead of at their deadline.
func (s *System) onEvent(evt any) {
	dl, ok := evt.(*actor.DeadLetterEvent)
	if !ok {
		return
	}
	who := "?"
	if dl.PID != nil {
		who = dl.PID.Id
	}
	switch m := dl.Message.(type) {
	case *request:
		m.answer(nil, fmt.Errorf("actors: request to %s: %w", who, ErrNotRunning))
	case *spawnRequest:
		m.answer(nil, fmt.Errorf("actors: spawn under %s: %w", who, ErrNotRunning))
	case *drainRequest:
		m.ack()
	}
}
