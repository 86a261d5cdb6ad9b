package devtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrClosed means the connection to the browser is gone: the browser exited, closed its
// pipe, or the connection was closed.
var ErrClosed = errors.New("devtools: the connection to the browser is closed")

// Error is the browser's answer to a command it refused.
type Error struct {
	// Method is the command's name, such as "Page.navigate".
	Method string
	// Code is the protocol's error code (-32601: no such method, -32602: invalid params).
	Code int64 `json:"code"`
	// Message is the browser's reason.
	Message string `json:"message"`
}

// Error says what was refused, and why.
func (e *Error) Error() string {
	return fmt.Sprintf("devtools: %s: %s (code %d)", e.Method, e.Message, e.Code)
}

// Conn is one connection to a browser's DevTools protocol: commands with their answers and
// events, each for the browser itself (session "") or for a page's session.
type Conn struct {
	w  io.WriteCloser
	rc io.Closer

	wmu sync.Mutex // one message written at a time

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan answer
	subs    map[subKey][]*Subscription
	err     error         // why the connection ended; set once
	done    chan struct{} // closed when the reader has stopped
}

type answer struct {
	result json.RawMessage
	err    error
}

type subKey struct{ session, method string }

// message is every message of the protocol, in either direction.
type message struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *Error          `json:"error,omitempty"`
}

// NewConn starts a connection over the two ends of a DevTools pipe: r what the browser
// writes (its fd 4), w what it reads (its fd 3). Close ends it and closes both.
func NewConn(r io.ReadCloser, w io.WriteCloser) *Conn {
	c := &Conn{w: w, rc: r, pending: map[int64]chan answer{}, subs: map[subKey][]*Subscription{}, done: make(chan struct{})}
	go c.read(newReader(r, MaxMessage))
	return c
}

// read dispatches the browser's messages until the pipe ends.
func (c *Conn) read(m *reader) {
	var err error
	for {
		var data []byte
		if data, err = m.next(); err != nil {
			break
		}
		var msg message
		if err = json.Unmarshal(data, &msg); err != nil {
			err = fmt.Errorf("devtools: the browser sent a message that is not JSON: %w", err)
			break
		}
		c.dispatch(msg)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) {
		err = ErrClosed
	}
	c.end(err)
}

func (c *Conn) dispatch(msg message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if msg.ID != 0 {
		ch, ok := c.pending[msg.ID]
		if !ok {
			return // a command whose caller gave up
		}
		delete(c.pending, msg.ID)
		if msg.Error != nil {
			ch <- answer{err: msg.Error}
		} else {
			ch <- answer{result: msg.Result}
		}
		return
	}
	for _, s := range c.subs[subKey{msg.SessionID, msg.Method}] {
		s.push(Event{Method: msg.Method, Params: msg.Params})
	}
}

// end records why the connection ended, fails the commands waiting and ends the
// subscriptions.
func (c *Conn) end(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.pending {
		ch <- answer{err: c.err}
		delete(c.pending, id)
	}
	for k, subs := range c.subs {
		for _, s := range subs {
			s.stop(c.err) // once per method it follows: stop keeps the first error
		}
		delete(c.subs, k)
	}
	c.mu.Unlock()
	close(c.done)
}

// Done is closed once the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended, or nil while it lasts.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	default:
		return nil
	}
}

// Call sends the command method with params (nil: none) to the session (""; the browser)
// and decodes its result into result (nil: ignored). It returns an *Error when the browser
// refused it, and ctx's error when ctx ends first (the answer, if one comes, is dropped).
func (c *Conn) Call(ctx context.Context, session, method string, params, result any) error {
	msg := message{SessionID: session, Method: method}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("devtools: %s: encode the parameters: %w", method, err)
		}
		msg.Params = p
	}
	ch := make(chan answer, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	msg.ID = c.nextID
	c.pending[msg.ID] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, msg.ID)
		c.mu.Unlock()
	}
	data, err := json.Marshal(msg)
	if err != nil {
		forget()
		return fmt.Errorf("devtools: %s: %w", method, err)
	}
	if err := c.write(append(data, 0)); err != nil {
		forget()
		// A pipe that takes no more is a browser gone (it exited before the reader saw the
		// pipe's end), and a message cut short would leave the pipe unusable anyway.
		return fmt.Errorf("devtools: %s: send to the browser (%v): %w", method, err, ErrClosed)
	}
	select {
	case a := <-ch:
		if a.err != nil {
			var e *Error
			if errors.As(a.err, &e) {
				e.Method = method
			}
			return a.err
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(a.result, result); err != nil {
			return fmt.Errorf("devtools: %s: decode the answer: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	}
}

func (c *Conn) write(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(data)
	return err
}

// Subscribe returns the events named methods that the browser sends for session ("": the
// browser's own), in the order it sends them, from now until the subscription or the
// connection is closed.
func (c *Conn) Subscribe(session string, methods ...string) *Subscription {
	s := &Subscription{c: c, wake: make(chan struct{}, 1)}
	for _, m := range methods {
		s.keys = append(s.keys, subKey{session, m})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		s.stop(c.err)
		return s
	}
	for _, k := range s.keys {
		c.subs[k] = append(c.subs[k], s)
	}
	return s
}

// Close ends the connection: both ends of the pipe are closed and the reader has stopped
// when it returns. Commands still waiting get ErrClosed.
func (c *Conn) Close() error {
	werr := c.w.Close() // a write blocked on a browser that reads nothing ends with it
	rerr := c.rc.Close()
	<-c.done
	return errors.Join(werr, rerr)
}

// Event is an event the browser sent.
type Event struct {
	// Method is the event's name, such as "Page.lifecycleEvent".
	Method string
	// Params are its parameters, as the browser sent them.
	Params json.RawMessage
}

// Subscription is a queue of events, in the order the browser sent them.
type Subscription struct {
	c    *Conn
	keys []subKey
	wake chan struct{} // a token when the queue or err changed

	mu     sync.Mutex
	queue  []Event
	err    error
	closed bool
}

func (s *Subscription) push(ev Event) {
	s.mu.Lock()
	if !s.closed {
		s.queue = append(s.queue, ev)
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) stop(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Next returns the next event, waiting for one until ctx ends or the connection does. The
// events queued before the connection ended are returned first.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return Event{}, err
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Close ends the subscription: no more events are queued.
func (s *Subscription) Close() {
	s.c.mu.Lock()
	for _, k := range s.keys {
		subs := s.c.subs[k]
		for i, o := range subs {
			if o == s {
				s.c.subs[k] = append(subs[:i:i], subs[i+1:]...)
				break
			}
		}
		if len(s.c.subs[k]) == 0 {
			delete(s.c.subs, k)
		}
	}
	s.c.mu.Unlock()
	s.mu.Lock()
	s.closed, s.queue = true, nil
	if s.err == nil {
		s.err = errors.New("devtools: the subscription is closed")
	}
	s.mu.Unlock()
	s.signal()
}
