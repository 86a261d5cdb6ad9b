package dashboard

import (
	"context"
	"net/http"
	"time"
)

// Email serves the Email page: the owner's email accounts with how their last read went,
// the triage of the mail that arrived, and the sends waiting for the owner's approval.
// Every text it returns has been scrubbed of stored secrets by the implementation, and no
// account carries its password.
type Email interface {
	// EmailAccounts lists the accounts, by name.
	EmailAccounts(ctx context.Context) ([]EmailAccount, error)
	// EmailTriage lists the messages owed or given a triage run, the latest received first,
	// at most limit.
	EmailTriage(ctx context.Context, limit int) ([]EmailTriage, error)
	// EmailDrafts lists the sends (email.send and email.reply) waiting for the owner's
	// approval, newest first, at most limit.
	EmailDrafts(ctx context.Context, limit int) ([]EmailDraft, error)
}

// EmailAccount is one email account as the page shows it: never its password.
type EmailAccount struct {
	Name        string     `json:"name"`          // the owner's name for it ("work")
	Address     string     `json:"address"`       // the address mail is received at
	LastSync    *time.Time `json:"last_sync"`     // the end of the last read that succeeded; nil: never read
	LastError   string     `json:"last_error"`    // the sentence of the last read that failed; "" once one succeeds
	LastErrorAt *time.Time `json:"last_error_at"` // when that read failed
}

// The states of a message's triage, from its run's latest event.
const (
	TriagePending  = "pending"  // owed a run that is not started yet
	TriageQueued   = "queued"   // its run is enqueued and has not begun
	TriageStarted  = "started"  // its run is working
	TriageWaiting  = "waiting"  // its run waits for the owner's decision on an approval
	TriageRetrying = "retrying" // its run failed and is tried again
	TriageDone     = "done"     // its run ended with an answer
	TriageFailed   = "failed"   // its run ended without one
)

// EmailTriage is one message and its triage. From and Subject are text a stranger wrote.
type EmailTriage struct {
	Message        int64     `json:"message"`                   // the message's row in email.messages
	Account        string    `json:"account"`                   // the account it arrived in
	From           string    `json:"from"`                      // its From, as the server gave it
	Subject        string    `json:"subject"`                   // its Subject
	Received       time.Time `json:"received"`                  // when buddi read it
	State          string    `json:"state"`                     // one of the Triage… states
	RunID          string    `json:"run_id,omitempty"`          // its triage run, once started
	ConversationID string    `json:"conversation_id,omitempty"` // the run's conversation, when known
	Agent          string    `json:"agent,omitempty"`           // the agent the run is for, when known
}

// EmailDraft is a send waiting for the owner's approval; the card to decide it is on Home.
type EmailDraft struct {
	Approval  string    `json:"approval"`   // the action's id
	Tool      string    `json:"tool"`       // email.send or email.reply
	Agent     string    `json:"agent"`      // the agent that proposed it
	Summary   string    `json:"summary"`    // the envelope's one line
	CreatedAt time.Time `json:"created_at"` // when it was proposed
}

// emailShown is how many triaged messages and drafts the page lists.
const emailShown = 50

// emailRoutes registers the Email page's route when Deps.Email is set.
func (s *Server) emailRoutes() {
	if s.deps.Email == nil {
		return
	}
	s.handle("GET /api/email", s.getEmail)
}

// emailTriageJSON is a triaged message with its agent's handle.
type emailTriageJSON struct {
	EmailTriage
	AgentHandle string `json:"agent_handle,omitempty"` // the agent's @handle, when it still exists
}

// emailDraftJSON is a draft with its agent's handle.
type emailDraftJSON struct {
	EmailDraft
	AgentHandle string `json:"agent_handle,omitempty"` // the agent's @handle, when it still exists
}

// getEmail answers GET /api/email: the accounts, the latest triage and the drafts waiting.
func (s *Server) getEmail(w http.ResponseWriter, r *http.Request) {
	accounts, err := s.deps.Email.EmailAccounts(r.Context())
	if err != nil {
		s.failed(w, r, "the email accounts could not be read", err)
		return
	}
	triage, err := s.deps.Email.EmailTriage(r.Context(), emailShown)
	if err != nil {
		s.failed(w, r, "the triage of the mail could not be read", err)
		return
	}
	drafts, err := s.deps.Email.EmailDrafts(r.Context(), emailShown)
	if err != nil {
		s.failed(w, r, "the drafts awaiting approval could not be read", err)
		return
	}
	handles := s.handles()
	if accounts == nil {
		accounts = []EmailAccount{}
	}
	outTriage := make([]emailTriageJSON, 0, len(triage))
	for _, t := range triage {
		outTriage = append(outTriage, emailTriageJSON{EmailTriage: t, AgentHandle: handles[t.Agent]})
	}
	outDrafts := make([]emailDraftJSON, 0, len(drafts))
	for _, d := range drafts {
		outDrafts = append(outDrafts, emailDraftJSON{EmailDraft: d, AgentHandle: handles[d.Agent]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"accounts": accounts, "triage": outTriage, "drafts": outDrafts})
}
