// Package live carries a conversation's events to the surfaces that watch it as they happen:
// streamed text, tool calls and their answers, approval cards, the end of a turn. It is a
// hub in memory; everything it carries is also in the transcript or the event log, so a
// surface that reconnects reads those and misses nothing that matters.
//
// Each conversation keeps its latest events in a bounded buffer with increasing sequence
// numbers, so a surface that subscribes just after sending (when the run may already have
// started) asks for the events from its run onward and gets them all.
//
// Nothing reaches the hub's buffer or a subscriber unscrubbed: a model's streamed text comes
// from the run's streaming redactor (redact.Stream, which holds back a secret split across
// deltas), and the hub's Scrub takes every stored secret out of everything else (what the
// owner wrote, a tool's answer, a card, a failure).
package live

import (
	"encoding/json"
	"sync"
	"time"

	"buddi/core/redact"
)

// Event is one live event of a conversation.
type Event struct {
	Seq            int64  `json:"seq"`              // increasing across the hub
	ConversationID string `json:"conversation_id"`  // the conversation it belongs to
	RunID          string `json:"run_id,omitempty"` // the run it belongs to
	// Type: run.started, text, tool.call, tool.result, approval, question, owner.joined,
	// run.suspended, run.resumed, run.waiting (the provider asked buddi to wait: Text says
	// why, Until when it tries again), run.retrying (the attempt broke off: the run's text
	// streamed so far is void, and it is tried again at Until), run.finished, run.failed,
	// conversation.ended.
	Type string `json:"type"`
	// Text is streamed text (a "text" event: the output of the run's redact.Stream, passed
	// on as it is), a tool's answer, a card's summary, what the owner added, a failure's
	// sentence.
	Text     string `json:"text,omitempty"`
	Tool     string `json:"tool,omitempty"`      // the tool of a call, answer or card
	CallID   string `json:"call_id,omitempty"`   // the model's id of the call
	ActionID string `json:"action_id,omitempty"` // the action of a card or a suspension
	// Preview is an approval card's preview; Args a tool call's arguments (scrubbed).
	Preview string `json:"preview,omitempty"`  // an approval card's preview
	Args    string `json:"args,omitempty"`     // a tool call's arguments, scrubbed
	IsError bool   `json:"is_error,omitempty"` // a tool's answer reports a failure
	// Data is a tool answer's structured output for the surfaces (a renderer and its input).
	Data json.RawMessage `json:"data,omitempty"`
	// View is what the canvas draws for a tool answer or an approval card (a core/views
	// View), when it has something to draw.
	View json.RawMessage `json:"view,omitempty"`
	// Retry is set on run.failed when a retry is honest.
	Retry bool `json:"retry,omitempty"`
	// Until is when a waiting or retrying run tries again.
	Until *time.Time `json:"until,omitempty"`
	At    time.Time  `json:"at"` // when it was published
}

// BufferSize is how many events a conversation keeps for late subscribers.
const BufferSize = 4096

// Hub fans events out to subscribers. The zero value is an empty hub that scrubs nothing.
type Hub struct {
	// Scrub, when set, takes stored secrets out of every event but streamed text (which a
	// run redacts as a stream) before it is buffered or handed out: its text, arguments,
	// preview, data and view.
	Scrub redact.Scrubber

	mu    sync.Mutex
	seq   int64
	convs map[string]*stream
}

type stream struct {
	buf  []Event
	subs map[*Subscription]struct{}
	idle time.Time
}

// Subscription receives a conversation's events on C until it is closed; a subscriber too
// slow to keep up is dropped (C is closed) rather than slowing the run.
type Subscription struct {
	C      chan Event // the events, in order; closed when the subscription ends
	hub    *Hub
	conv   string
	closed bool
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{convs: map[string]*stream{}} }

// Publish adds ev to its conversation's stream and hands it to every subscriber.
func (h *Hub) Publish(ev Event) {
	if h == nil {
		return
	}
	h.scrub(&ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	ev.Seq = h.seq
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	s := h.streamLocked(ev.ConversationID)
	if len(s.buf) == BufferSize {
		copy(s.buf, s.buf[1:])
		s.buf = s.buf[:BufferSize-1]
	}
	s.buf = append(s.buf, ev)
	for sub := range s.subs {
		select {
		case sub.C <- ev:
		default: // too slow: drop it, it reconnects and reads the transcript
			h.closeLocked(sub)
		}
	}
	h.sweepLocked()
}

// scrub takes stored secrets out of ev, outside the hub's lock.
func (h *Hub) scrub(ev *Event) {
	if h.Scrub == nil || ev.Type == "text" {
		return
	}
	r := h.Scrub.Current()
	ev.Text = r.String(ev.Text)
	ev.Preview = r.String(ev.Preview)
	if ev.Args != "" {
		if json.Valid([]byte(ev.Args)) {
			ev.Args = string(r.JSON([]byte(ev.Args)))
		} else {
			ev.Args = r.String(ev.Args)
		}
	}
	if len(ev.Data) > 0 {
		ev.Data = r.JSON(ev.Data)
	}
	if len(ev.View) > 0 {
		ev.View = r.JSON(ev.View)
	}
}

func (h *Hub) streamLocked(conv string) *stream {
	if h.convs == nil {
		h.convs = map[string]*stream{}
	}
	s, ok := h.convs[conv]
	if !ok {
		s = &stream{subs: map[*Subscription]struct{}{}}
		h.convs[conv] = s
	}
	s.idle = time.Now()
	return s
}

// sweepLocked forgets conversations nobody watched or wrote to for ten minutes.
func (h *Hub) sweepLocked() {
	if len(h.convs) < 256 {
		return
	}
	for id, s := range h.convs {
		if len(s.subs) == 0 && time.Since(s.idle) > 10*time.Minute {
			delete(h.convs, id)
		}
	}
}

// Subscribe watches a conversation. The buffered events of fromRun onward (from the first
// event of that run; "" means none of the past) come first, then live ones.
func (h *Hub) Subscribe(conv, fromRun string) *Subscription {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streamLocked(conv)
	sub := &Subscription{C: make(chan Event, BufferSize+256), hub: h, conv: conv}
	if fromRun != "" {
		start := -1
		for i, ev := range s.buf {
			if ev.RunID == fromRun {
				start = i
				break
			}
		}
		if start >= 0 {
			for _, ev := range s.buf[start:] {
				sub.C <- ev
			}
		}
	}
	s.subs[sub] = struct{}{}
	return sub
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.closeLocked(s)
}

func (h *Hub) closeLocked(sub *Subscription) {
	if sub.closed {
		return
	}
	sub.closed = true
	if s, ok := h.convs[sub.conv]; ok {
		delete(s.subs, sub)
	}
	close(sub.C)
}
