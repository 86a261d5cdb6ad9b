package dashboard

import (
	"net/http"
	"time"
)

// heldQuestion is a held question as Home lists it: the agent's names beside its words.
type heldQuestion struct {
	ConversationID string    `json:"conversation_id"`
	Agent          string    `json:"agent"`
	Handle         string    `json:"handle"`
	Name           string    `json:"name"`
	Question       string    `json:"question"`
	AskedAt        time.Time `json:"asked_at"`
	ExpiresAt      time.Time `json:"expires_at"`
}

// questionRoutes registers GET /api/questions, the held questions Home offers to answer (the
// answer is the owner's next message in the conversation: POST /api/messages).
func (s *Server) questionRoutes() {
	s.handle("GET /api/questions", s.listQuestions)
}

// listQuestions lists the live held questions, the oldest first, each with the agent that
// asked it.
func (s *Server) listQuestions(w http.ResponseWriter, r *http.Request) {
	qs, err := s.deps.Chat.Conversations.Questions(r.Context())
	if err != nil {
		s.answer(w, r, err, nil)
		return
	}
	out := make([]heldQuestion, 0, len(qs))
	cat, catErr := s.deps.Chat.Catalog()
	for _, q := range qs {
		h := heldQuestion{ConversationID: q.ConversationID, Agent: q.Agent, Handle: q.Agent, Name: q.Agent,
			Question: q.Text, AskedAt: q.AskedAt, ExpiresAt: q.ExpiresAt}
		if catErr == nil {
			if a, ok := cat.ByID(q.Agent); ok {
				h.Handle, h.Name = a.Handle, a.Name
			}
		}
		out = append(out, h)
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": out})
}
