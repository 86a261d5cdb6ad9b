package email

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"buddi/plugins"
)

// MaxIdle bounds how long one poll of the source waits in IDLE: well inside the two minutes
// core gives a source's poll, so a poll that waits is never taken for a stuck one.
const MaxIdle = 90 * time.Second

// idleMargin is the part of a period a poll leaves free between its IDLE and the next poll.
const idleMargin = 5 * time.Second

// IdleWindow is how long a poll of a source of the given period waits in IDLE after
// catching up: the period less a margin, at most [MaxIdle], and none for a period too short
// to wait in.
func IdleWindow(period time.Duration) time.Duration {
	return max(0, min(period-idleMargin, MaxIdle))
}

// errNoIdle is what watch returns for a server that does not offer IDLE.
var errNoIdle = errors.New("the server does not offer IDLE")

type unilateralKey struct{}

// unilateralFrom is the handler of unsolicited server data a session dialled under ctx gets:
// the one watch put there, or none.
func unilateralFrom(ctx context.Context) *imapclient.UnilateralDataHandler {
	h, _ := ctx.Value(unilateralKey{}).(*imapclient.UnilateralDataHandler)
	return h
}

// PollWaiting reads every account and starts the triage owed, as [Poller.PollAll] does,
// then waits up to window for new mail with IDLE on each account whose server offers it:
// mail that arrives is read and triaged at once, not at the next poll. With no account that
// offers IDLE (or a window of zero) it returns after the first round, and polling alone
// finds new mail. It returns the outcome of its latest round: a round that fails (an account,
// or a triage that could not start) is this poll's failure, kept as the source's.
func (p *Poller) PollWaiting(ctx context.Context, enqueue plugins.EnqueueRun, window time.Duration) error {
	until := time.Now().Add(window)
	round := func(ctx context.Context) error {
		err := p.PollAll(ctx, enqueue)
		if p.onRound != nil {
			p.onRound()
		}
		return err
	}
	last := round(ctx)
	if window <= 0 || ctx.Err() != nil {
		return last
	}
	accounts, err := p.Store.Accounts(ctx)
	if err != nil || len(accounts) == 0 {
		return errors.Join(last, err)
	}
	wctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	arrived := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for _, a := range accounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { _ = recover() }() // a watch that crashes, like one that ends, leaves its account to polling
			_ = p.watch(wctx, a, arrived)
		}()
	}
	watching := make(chan struct{})
	go func() { wg.Wait(); close(watching) }()
	for {
		select {
		case <-wctx.Done():
			<-watching
			return last
		case <-watching:
			return last
		case <-arrived:
			err := round(wctx)
			if err != nil && errors.Is(wctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				continue // the window ended during the round: the next poll reads on from the cursor
			}
			last = err
		}
	}
}

// watch logs in to a's server, examines the INBOX and waits in IDLE until ctx ends, telling
// arrived (without blocking) when the mailbox grows, and as the IDLE begins when the INBOX
// already holds mail past the cursor (it came between the last read and the IDLE). It
// returns errNoIdle at once for a server that does not offer IDLE.
func (p *Poller) watch(ctx context.Context, a Account, arrived chan<- struct{}) error {
	tell := func() {
		select {
		case arrived <- struct{}{}:
		default:
		}
	}
	handler := &imapclient.UnilateralDataHandler{Mailbox: func(d *imapclient.UnilateralDataMailbox) {
		if d.NumMessages != nil {
			tell()
		}
	}}
	s, err := p.dial(context.WithValue(ctx, unilateralKey{}, handler), a)
	if err != nil {
		return err
	}
	defer s.close()
	if caps := s.caps(); !caps.Has(imap.CapIdle) && !caps.Has(imap.CapIMAP4rev2) {
		return errNoIdle
	}
	var sel *imap.SelectData
	if err := s.call(func() (err error) {
		sel, err = s.c.Select(inbox, &imap.SelectOptions{ReadOnly: true}).Wait()
		return err
	}); err != nil {
		return err
	}
	var idle *imapclient.IdleCommand
	if err := s.call(func() (err error) { idle, err = s.c.Idle(); return err }); err != nil {
		return err
	}
	if behind, err := p.Store.behind(ctx, a.ID, sel); err != nil || behind {
		tell() // mail came since the last read (or the cursor could not be read): read again
	}
	if p.onIdle != nil {
		p.onIdle()
	}
	ended := make(chan error, 1)
	go func() { ended <- idle.Wait() }()
	select {
	case <-ctx.Done():
		return s.call(func() error {
			if err := idle.Close(); err != nil {
				return err
			}
			return <-ended
		})
	case err := <-ended: // the server ended it (a logout, a dropped connection)
		return err
	}
}
