package email

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// With IDLE (Dovecot offers it), a message that arrives while a poll waits is read and its
// triage started at once, inside the same poll, not at the next one; the poll ends when its
// window does, or at once when its context is cancelled.
func TestIdleReadsMailAsItArrives(t *testing.T) {
	f := newFixture(t)
	f.poll(t) // the mailbox is seen: it starts at now
	var e enqueued
	started := make(chan struct{})
	var once sync.Once
	enqueue := func(ctx context.Context, agent, prompt, key string) error {
		err := e.enqueue(ctx, agent, prompt, key)
		once.Do(func() { close(started) })
		return err
	}
	idling := make(chan struct{})
	var idleOnce sync.Once
	f.poller.onIdle = func() { idleOnce.Do(func() { close(idling) }) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	begun := time.Now()
	go func() { done <- f.poller.PollWaiting(ctx, enqueue, time.Minute) }()

	// The message arrives once the poll waits in IDLE: only the server's word can bring it in
	// before the window ends.
	select {
	case <-idling:
	case err := <-done:
		t.Fatalf("the poll ended (%v) without waiting in IDLE", err)
	}
	f.srv.Deliver(t, msg(7, "pushed"))
	delivered := time.Now()
	select {
	case <-started:
		t.Logf("from the delivery to its triage asked for, through IDLE: %v", time.Since(delivered).Round(time.Millisecond))
	case err := <-done:
		t.Fatalf("the poll ended (%v) before the message that arrived during it was triaged", err)
	case <-time.After(45 * time.Second):
		t.Fatal("no triage within 45 s of the delivery, inside a poll waiting a minute")
	}
	select {
	case err := <-done:
		t.Fatalf("the poll ended (%v) after %v, before its window", err, time.Since(begun))
	default:
	}
	e.mu.Lock()
	runs := append([]run(nil), e.runs...)
	e.mu.Unlock()
	if len(runs) != 1 || !strings.Contains(runs[0].prompt, "pushed") {
		t.Fatalf("runs: %+v", runs)
	}
	cancel()
	select {
	case err := <-done:
		// Cancelled in a round, the poll says so (core records it as cut off); waiting, nil.
		if err != nil && !strings.Contains(err.Error(), "cancel") && !strings.Contains(err.Error(), "stopped") {
			t.Fatalf("a poll cancelled while waiting: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the poll did not end within 30 s of its cancellation")
	}
}

// IdleWindow leaves a margin of the period, never goes past MaxIdle, and is zero for a
// period too short to wait in.
func TestIdleWindow(t *testing.T) {
	for period, want := range map[time.Duration]time.Duration{
		time.Second: 0, 5 * time.Second: 0, time.Minute: 55 * time.Second, time.Hour: MaxIdle,
	} {
		if got := IdleWindow(period); got != want {
			t.Errorf("IdleWindow(%v) = %v, want %v", period, got, want)
		}
	}
}

// A round during the wait that fails (here: the triage cannot start, no agent holds the
// mail role) is the poll's failure, told when the window ends; so is nothing else.
func TestAFailedRoundInTheWaitIsThePollsFailure(t *testing.T) {
	f := newFixture(t)
	f.poll(t)
	idling := make(chan struct{})
	var idleOnce sync.Once
	f.poller.onIdle = func() { idleOnce.Do(func() { close(idling) }) }
	rounds := make(chan struct{}, 8)
	f.poller.onRound = func() { rounds <- struct{}{} }
	refuse := func(context.Context, string, string, string) error { return errors.New("no agent holds the role mail") }
	done := make(chan error, 1)
	go func() { done <- f.poller.PollWaiting(context.Background(), refuse, 8*time.Second) }()
	<-rounds // the first round, with nothing owed: it succeeds
	select {
	case <-idling:
	case err := <-done:
		t.Fatalf("the poll ended (%v) without waiting in IDLE", err)
	}
	f.srv.Deliver(t, msg(8, "owed"))
	<-rounds // the round the arrival asked for: its triage cannot start
	if err := <-done; err == nil || !strings.Contains(err.Error(), "give an agent the mail role") {
		t.Fatalf("the poll whose last round failed returned %v", err)
	}
}
