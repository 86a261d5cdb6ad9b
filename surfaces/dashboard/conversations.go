package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"buddi/agents"
	"buddi/core/conversation"
	"buddi/runtime/live"
)

// Chat is what the conversation routes need: the store, the runs' job, the agents and the
// live hub. Nil leaves the routes out.
type Chat struct {
	Conversations *conversation.Store // the conversations and transcripts
	// Start returns the function that enqueues the run answering a message sent on surface.
	Start func(surface string) conversation.StartRun
	// Catalog loads the agents.
	Catalog func() (*agents.Catalog, error)
	// Live carries the runs' events.
	Live *live.Hub
	// Available says whether an agent can run now and, if not, why in a sentence; nil
	// reports every agent available.
	Available func(ctx context.Context, agent string) (ok bool, why string)
	// Stop stops the turn running in a conversation, or returns ErrNothingToStop.
	Stop func(ctx context.Context, conversation string) error
	// TakeOffer takes an offer (one atomic claim across surfaces) and sends its prompt.
	TakeOffer func(ctx context.Context, id int64) (conversation.Sent, error)
	// Deliver, when set, starts the new run a stored message asked for at once, before the
	// queue fetches its job (which stays the durable record and joins it).
	Deliver func(ctx context.Context, sent conversation.Sent, surface string)
}

type agentJSON struct {
	ID        string   `json:"id"`
	Handle    string   `json:"handle"`
	Name      string   `json:"name"`
	Default   bool     `json:"default"`
	Roles     []string `json:"roles"`
	Available bool     `json:"available"`
	Problem   string   `json:"problem,omitempty"`
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	cat, err := s.deps.Chat.Catalog()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the agents could not be loaded: "+err.Error())
		return
	}
	out := []agentJSON{}
	for _, a := range cat.All() {
		j := agentJSON{ID: a.ID, Handle: a.Handle, Name: a.Name, Default: a.Default, Roles: a.Roles, Available: true}
		if s.deps.Chat.Available != nil {
			j.Available, j.Problem = s.deps.Chat.Available(r.Context(), a.ID)
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

type sendBody struct {
	Agent          string `json:"agent"`           // handle or id; empty: the default agent
	ConversationID string `json:"conversation_id"` // empty: the agent's current conversation
	Resume         bool   `json:"resume"`          // the owner asked for this conversation by id
	New            bool   `json:"new"`             // start a new conversation
	Surface        string `json:"surface"`         // terminal or dashboard (default)
	Text           string `json:"text"`
}

// sendMessage records the owner's message and enqueues the run that answers it.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) {
	var b sendBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not a message: send {\"text\": \"…\"} ("+err.Error()+")")
		return
	}
	switch b.Surface {
	case "":
		b.Surface = "dashboard"
	case "terminal", "dashboard":
	default:
		writeError(w, http.StatusBadRequest, "surface must be terminal or dashboard")
		return
	}
	cat, err := s.deps.Chat.Catalog()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the agents could not be loaded: "+err.Error())
		return
	}
	var a agents.Agent
	var ok bool
	msg := conversation.Message{ConversationID: b.ConversationID, Resume: b.Resume, New: b.New, Surface: b.Surface, Text: b.Text}
	switch {
	case b.Agent == "" && b.ConversationID != "":
		// The conversation's agent, learnt in the message's own transaction.
		msg.AgentOf = func(id string) (time.Duration, error) {
			if a, ok = cat.ByID(id); !ok {
				return 0, errNoAgent
			}
			return a.Rollover(), nil
		}
	case b.Agent == "":
		a, err = cat.Default()
		ok = err == nil
	default:
		if a, ok = cat.ByHandle(b.Agent); !ok {
			a, ok = cat.ByID(strings.TrimPrefix(b.Agent, "@"))
		}
	}
	if msg.AgentOf == nil {
		if !ok {
			writeError(w, http.StatusNotFound, "no agent "+b.Agent+": `buddi agents list` shows who there is")
			return
		}
		msg.Agent, msg.Rollover = a.ID, a.Rollover()
	}
	sent, err := s.deps.Chat.Conversations.Send(r.Context(), msg, s.deps.Chat.Start(b.Surface))
	if errors.Is(err, errNoAgent) {
		writeError(w, http.StatusNotFound, "the agent of this conversation is gone: `buddi agents list` shows who there is")
		return
	}
	if err != nil {
		s.failConversation(w, r, err)
		return
	}
	if sent.Joined && s.deps.Chat.Live != nil {
		s.deps.Chat.Live.Publish(live.Event{ConversationID: sent.Conversation.ID, RunID: sent.RunID, Type: "owner.joined", Text: b.Text})
	}
	if !sent.Joined && sent.RunID != "" && s.deps.Chat.Deliver != nil {
		s.deps.Chat.Deliver(r.Context(), sent, b.Surface)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"conversation": sent.Conversation, "run_id": sent.RunID, "joined": sent.Joined,
		"ended": sent.Ended, "agent": agentJSON{ID: a.ID, Handle: a.Handle, Name: a.Name, Default: a.Default, Roles: a.Roles}})
}

// errNoAgent refuses a message to a conversation whose agent is no longer in the catalogue.
var errNoAgent = errors.New("the conversation's agent is gone")

func (s *Server) failConversation(w http.ResponseWriter, r *http.Request, err error) {
	if slow(w, r, err) {
		return
	}
	switch {
	case errors.Is(err, conversation.ErrNotFound):
		writeError(w, http.StatusNotFound, "no such conversation: `buddi chat --last` resumes the latest")
	case errors.Is(err, conversation.ErrEmptyMessage), errors.Is(err, conversation.ErrOtherAgent):
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		s.log.Error("conversation", "err", err)
		writeError(w, http.StatusInternalServerError, "the message could not be stored; nothing was sent")
	}
}

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	agent := r.URL.Query().Get("agent")
	if agent != "" {
		if cat, err := s.deps.Chat.Catalog(); err == nil {
			if a, ok := cat.ByHandle(agent); ok {
				agent = a.ID
			}
		}
	}
	convs, err := s.deps.Chat.Conversations.List(r.Context(), agent, limit)
	if err != nil {
		s.failConversation(w, r, err)
		return
	}
	if convs == nil {
		convs = []conversation.Conversation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": convs})
}

func (s *Server) getConversation(w http.ResponseWriter, r *http.Request) {
	conv, err := s.deps.Chat.Conversations.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failConversation(w, r, err)
		return
	}
	entries, err := s.deps.Chat.Conversations.Transcript(r.Context(), conv.ID)
	if err != nil {
		s.failConversation(w, r, err)
		return
	}
	transcript := withViews(withHTML(entries), s.deps.Tools.View, s.deps.Chat.Conversations.Scrub)
	writeJSON(w, http.StatusOK, map[string]any{"conversation": conv, "transcript": transcript})
}

var upgrader = websocket.Upgrader{
	ReadBufferSize: 4096, WriteBufferSize: 16384,
	// Same origin only: a page elsewhere cannot watch a conversation. The command line,
	// which sends no Origin, is let in by its bearer token (the gate checked it).
	CheckOrigin: func(r *http.Request) bool { return byBearer(r) || sameOrigin(r) },
}

// liveConversation streams a conversation's events over a websocket: those of ?run= onward
// that are still buffered, then live ones, as JSON text messages.
func (s *Server) liveConversation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.deps.Chat.Conversations.Get(r.Context(), id); err != nil {
		s.failConversation(w, r, err)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "buddi is stopping")
		return
	}
	s.sockets.Add(1)
	s.mu.Unlock()
	defer s.sockets.Done()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	sub := s.deps.Chat.Live.Subscribe(id, r.URL.Query().Get("run"))
	defer sub.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() { // reads only to notice the close
		defer cancel()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	ping := time.NewTicker(30 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "buddi is stopping"), time.Now().Add(time.Second))
			return
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(5*time.Second)); err != nil {
				return
			}
		case ev, ok := <-sub.C:
			if !ok {
				_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "too slow"), time.Now().Add(time.Second))
				return
			}
			_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := conn.WriteJSON(ev); err != nil {
				return
			}
		}
	}
}

// takeOffer is POST /api/offers/{id}/take: the chip clicked; one claim across surfaces.
func (s *Server) takeOffer(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if s.deps.Chat.TakeOffer == nil {
		writeError(w, http.StatusNotImplemented, "offers are not available")
		return
	}
	sent, err := s.deps.Chat.TakeOffer(r.Context(), id)
	if errors.Is(err, conversation.ErrOfferGone) {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	if err != nil {
		s.failConversation(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"conversation": sent.Conversation, "run_id": sent.RunID, "joined": sent.Joined})
}
