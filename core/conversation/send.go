package conversation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/eventlog"
	"buddi/core/events"
)

// StartRun enqueues the job of a new run in tx: the run answers the conversation's latest
// user entry.
type StartRun func(ctx context.Context, tx pgx.Tx, conv Conversation, runID string) error

// Message is what the owner wrote, and where.
type Message struct {
	// ConversationID is the conversation to write in; empty means the agent's current one.
	ConversationID string
	// Resume skips the lifetime judgement: the owner asked for this conversation by id.
	Resume bool
	// New starts a new conversation (the owner asked for one): the agent's current one, if
	// it has anything in it, ends.
	New bool
	// Agent is the agent's id (for a new conversation, and checked against a given one).
	Agent string
	// Surface is where the owner wrote: terminal, dashboard, telegram.
	Surface string
	// Text is the message.
	Text string
	// Rollover is the agent's idle rollover (judged here); zero means three hours.
	Rollover time.Duration
	// AgentOf, when set, hears in the message's transaction the agent of the conversation
	// it goes to (for a message that names only its conversation) and gives that agent's
	// rollover; its error refuses the message, and nothing is written.
	AgentOf func(agent string) (time.Duration, error)
	// Now is the clock; zero means time.Now.
	Now time.Time
	// Offer, when the message is a taken offer, is its label: the turn is stamped offer:<label>.
	Offer string
	// Also, when set, runs at the end of the message's transaction: a surface marks the
	// update it came from handled there, so it is never handled twice.
	Also func(ctx context.Context, tx pgx.Tx) error
}

// Sent is what became of a message.
type Sent struct {
	Conversation Conversation `json:"conversation"` // where the message went
	// RunID is the run that answers: a new one, or the working run the message joined.
	RunID string `json:"run_id"`
	// Joined reports that the message joined a run in flight (it waits in pending input).
	Joined bool `json:"joined"`
	// Ended is the conversation that ended because of this message, if one did, with why.
	Ended *Ended `json:"ended,omitempty"`
}

// Ended says which conversation ended, why, and what carried over, in one line for the owner.
type Ended struct {
	ID          string `json:"id"`           // the conversation that ended
	Reason      string `json:"reason"`       // idle, size or new
	CarriedOver string `json:"carried_over"` // the line the owner is told
}

// ErrEmptyMessage refuses a message with no text.
var ErrEmptyMessage = errors.New("the message is empty: write something to send")

// ErrOtherAgent refuses writing to another agent's conversation.
var ErrOtherAgent = errors.New("the conversation belongs to another agent")

// Send records the owner's message. The conversation's lifetime is judged first (idle past
// the rollover, or past MaxChars; a conversation with nothing in it, or with a run in flight,
// never ends). In the conversation then: with a run in flight the message waits in pending
// input and joins that run; otherwise it becomes a user entry and start enqueues the new run
// that answers it, in the same transaction.
func (s *Store) Send(ctx context.Context, m Message, start StartRun) (Sent, error) {
	if strings.TrimSpace(m.Text) == "" {
		return Sent{}, ErrEmptyMessage
	}
	m.Text = s.owner(m.Text) // scrubbed before anything is written, as the model gets it
	if m.Now.IsZero() {
		m.Now = time.Now()
	}
	var out Sent
	asked := m
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		out, m = Sent{}, asked
		conv, err := s.pick(ctx, tx, m)
		if err != nil {
			return err
		}
		if m.Agent == "" {
			m.Agent = conv.Agent
		}
		if m.AgentOf != nil {
			if m.Rollover, err = m.AgentOf(conv.Agent); err != nil {
				return err
			}
		}
		if m.Rollover <= 0 {
			m.Rollover = 3 * time.Hour
		}
		if m.New && conv.Chars > 0 {
			if conv.EndedAt == nil {
				ended, err := end(ctx, tx, conv, "new")
				if err != nil {
					return err
				}
				out.Ended = &ended
			}
			if conv, err = create(ctx, tx, m.Agent, m.Surface); err != nil {
				return err
			}
		} else if !m.Resume {
			if reason := judge(conv, m); reason != "" {
				ended, err := end(ctx, tx, conv, reason)
				if err != nil {
					return err
				}
				out.Ended = &ended
				if conv, err = create(ctx, tx, m.Agent, m.Surface); err != nil {
					return err
				}
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE core.conversations SET last_activity_at = $2, ended_at = NULL, ended_reason = '' WHERE id = $1`, conv.ID, m.Now); err != nil {
			return fmt.Errorf("touch conversation %s: %w", conv.ID, err)
		}
		// An answer to a held question releases it: the agent that asked owns the answer,
		// and this conversation is that agent's.
		if _, err := tx.Exec(ctx, `DELETE FROM core.questions WHERE conversation_id = $1`, conv.ID); err != nil {
			return fmt.Errorf("release the question of %s: %w", conv.ID, err)
		}
		if conv.ActiveRun != "" {
			if _, err := tx.Exec(ctx, `INSERT INTO core.pending_input (conversation_id, text, run_id) VALUES ($1, $2, $3)`,
				conv.ID, m.Text, conv.ActiveRun); err != nil {
				return fmt.Errorf("queue input for %s: %w", conv.ID, err)
			}
			out.Conversation, out.RunID, out.Joined = conv, conv.ActiveRun, true
			if _, err := eventlog.Append(ctx, tx, events.MessageJoined, conv.ID, events.MessageJoinedPayload{RunID: conv.ActiveRun, Surface: m.Surface}); err != nil {
				return err
			}
			return also(ctx, tx, m)
		}
		body := map[string]any{"text": m.Text, "surface": m.Surface}
		if m.Offer != "" {
			body["offer"] = m.Offer
		}
		if _, err := Append(ctx, tx, conv.ID, "", KindUser, body); err != nil {
			return err
		}
		runID, err := s.begin(ctx, tx, conv)
		if err != nil {
			return err
		}
		conv.ActiveRun = runID
		if err := start(ctx, tx, conv, runID); err != nil {
			return err
		}
		out.Conversation, out.RunID = conv, runID
		if _, err := eventlog.Append(ctx, tx, events.MessageReceived, conv.ID, events.MessageReceivedPayload{RunID: runID, Surface: m.Surface, Agent: conv.Agent}); err != nil {
			return err
		}
		return also(ctx, tx, m)
	})
	if err != nil {
		return Sent{}, err
	}
	return out, nil
}

func also(ctx context.Context, tx pgx.Tx, m Message) error {
	if m.Also == nil {
		return nil
	}
	return m.Also(ctx, tx)
}

// pick finds (and locks) the conversation the message goes to, creating one when needed.
func (s *Store) pick(ctx context.Context, tx pgx.Tx, m Message) (Conversation, error) {
	if m.ConversationID != "" {
		conv, err := get(ctx, tx, m.ConversationID, true)
		if err != nil {
			return conv, err
		}
		if m.Agent != "" && conv.Agent != m.Agent {
			return conv, fmt.Errorf("conversation %s is %s's, not %s's: %w", conv.ID, conv.Agent, m.Agent, ErrOtherAgent)
		}
		return conv, nil
	}
	// The agent's current conversation: its newest that has not ended. Serialise the
	// choice per agent, so two first messages do not open two conversations.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('core.conversations:' || $1))`, m.Agent); err != nil {
		return Conversation{}, fmt.Errorf("pick the conversation of %s: %w", m.Agent, err)
	}
	conv, err := scanConversation(tx.QueryRow(ctx, selectConversation+` WHERE agent = $1 AND ended_at IS NULL AND surface <> ALL($2)
		ORDER BY created_at DESC LIMIT 1 FOR UPDATE`, m.Agent, []string{SurfaceMission, SurfaceMCP}))
	if errors.Is(err, pgx.ErrNoRows) {
		return create(ctx, tx, m.Agent, m.Surface)
	}
	if err != nil {
		return conv, fmt.Errorf("pick the conversation of %s: %w", m.Agent, err)
	}
	return conv, nil
}

// judge says why conv ends before this message ("" when it carries on).
func judge(conv Conversation, m Message) string {
	if conv.Chars == 0 || conv.ActiveRun != "" {
		return "" // an empty conversation never ends; a working one is mid-turn
	}
	switch {
	case conv.EndedAt != nil:
		return "ended"
	case m.Now.Sub(conv.LastActivityAt) >= m.Rollover:
		return "idle"
	case conv.Chars >= MaxChars:
		return "size"
	}
	return ""
}

func create(ctx context.Context, tx pgx.Tx, agent, surface string) (Conversation, error) {
	c, err := scanConversation(tx.QueryRow(ctx, `INSERT INTO core.conversations (agent, surface) VALUES ($1, $2)
		RETURNING id::text, agent, surface, created_at, last_activity_at, chars, '', ended_at, ended_reason`, agent, surface))
	if err != nil {
		return c, fmt.Errorf("start a conversation with %s: %w", agent, err)
	}
	if _, err := eventlog.Append(ctx, tx, events.ConversationStarted, c.ID, events.ConversationStartedPayload{Agent: agent, Surface: surface}); err != nil {
		return c, err
	}
	return c, nil
}

// end closes conv and says what carried over: pending approvals survive (their runs resume
// the conversation that proposed them); offers and held questions do not.
func end(ctx context.Context, tx pgx.Tx, conv Conversation, reason string) (Ended, error) {
	if _, err := tx.Exec(ctx, `UPDATE core.conversations SET ended_at = now(), ended_reason = $2 WHERE id = $1`, conv.ID, reason); err != nil {
		return Ended{}, fmt.Errorf("end conversation %s: %w", conv.ID, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM core.questions WHERE conversation_id = $1`, conv.ID); err != nil {
		return Ended{}, fmt.Errorf("end conversation %s: %w", conv.ID, err)
	}
	// Offers do not carry over: one taken later would reopen this conversation.
	if _, err := tx.Exec(ctx, `UPDATE core.offers SET expires_at = now() WHERE conversation_id = $1 AND taken_at IS NULL AND expires_at > now()`, conv.ID); err != nil {
		return Ended{}, fmt.Errorf("end conversation %s: %w", conv.ID, err)
	}
	var pending int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM core.actions a JOIN core.approvals p ON p.action_id = a.id
		WHERE a.conversation_id = $1 AND p.state = 'pending'`, conv.ID).Scan(&pending); err != nil {
		return Ended{}, fmt.Errorf("end conversation %s: %w", conv.ID, err)
	}
	why := map[string]string{"idle": "it had been quiet a while", "size": "it had grown long", "ended": "it had ended", "new": "you asked for a new one"}[reason]
	line := "A new conversation starts here (" + why + "): nothing carried over but what buddi remembers about you."
	switch pending {
	case 0:
	case 1:
		line = "A new conversation starts here (" + why + "); 1 approval from the last one is still waiting for you."
	default:
		line = fmt.Sprintf("A new conversation starts here (%s); %d approvals from the last one are still waiting for you.", why, pending)
	}
	if _, err := eventlog.Append(ctx, tx, events.ConversationEnded, conv.ID, events.ConversationEndedPayload{Reason: reason, PendingApprovals: pending}); err != nil {
		return Ended{}, err
	}
	return Ended{ID: conv.ID, Reason: reason, CarriedOver: line}, nil
}

// begin makes a new run the conversation's run in flight.
func (s *Store) begin(ctx context.Context, tx pgx.Tx, conv Conversation) (string, error) {
	var runID string
	if err := tx.QueryRow(ctx, `UPDATE core.conversations SET active_run = gen_random_uuid() WHERE id = $1 RETURNING active_run::text`, conv.ID).Scan(&runID); err != nil {
		return "", fmt.Errorf("start a run in %s: %w", conv.ID, err)
	}
	return runID, nil
}

// SurfaceMission marks the conversations of unattended work (a mission's occurrence): they
// are never the agent's current conversation with the owner.
const SurfaceMission = "mission"

// SurfaceMCP marks the conversations another program holds with an agent through buddi mcp:
// like a mission's, they are never the agent's current conversation with the owner.
const SurfaceMCP = "mcp"

// Claim records, in the transaction that starts a run, what the run was started for (an
// occurrence, a reminder, a wake); an error (it was claimed already) starts nothing.
type Claim func(ctx context.Context, tx pgx.Tx, runID string) error

// StartDetached opens a conversation of its own for unattended work (surface
// SurfaceMission), writes text as its first turn, enqueues the run that answers it and runs
// claim (when set), in one transaction: a run is started for its cause once, or not at all.
// The agent's conversation with the owner is left alone.
func (s *Store) StartDetached(ctx context.Context, agent, text string, start StartRun, claim Claim) (Sent, error) {
	return s.StartApart(ctx, SurfaceMission, agent, text, start, claim)
}

// StartApart is StartDetached on another surface that is never the agent's current
// conversation with the owner (SurfaceMission, SurfaceMCP).
func (s *Store) StartApart(ctx context.Context, surface, agent, text string, start StartRun, claim Claim) (Sent, error) {
	if surface != SurfaceMission && surface != SurfaceMCP {
		return Sent{}, fmt.Errorf("a conversation apart is a mission's or buddi mcp's, not %q", surface)
	}
	if strings.TrimSpace(text) == "" {
		return Sent{}, ErrEmptyMessage
	}
	text = s.owner(text)
	var out Sent
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		conv, err := create(ctx, tx, agent, surface)
		if err != nil {
			return err
		}
		if _, err := Append(ctx, tx, conv.ID, "", KindUser, map[string]any{"text": text, "surface": surface}); err != nil {
			return err
		}
		runID, err := s.begin(ctx, tx, conv)
		if err != nil {
			return err
		}
		conv.ActiveRun = runID
		if err := start(ctx, tx, conv, runID); err != nil {
			return err
		}
		if claim != nil {
			if err := claim(ctx, tx, runID); err != nil {
				return err
			}
		}
		out = Sent{Conversation: conv, RunID: runID}
		return nil
	})
	return out, err
}

// Finish ends run as the conversation's run in flight. Input that no step of it took becomes
// the next turn, in order: it is promoted to user entries and start enqueues the next run in
// the same transaction (next is its id, "" when nothing was waiting).
func (s *Store) Finish(ctx context.Context, conversationID, runID string, start StartRun) (next string, err error) {
	return s.FinishThen(ctx, conversationID, runID, start, nil)
}

// FinishThen is Finish that also runs then, when set, in the same transaction once the run
// is finished (or was already): then hears the next run's id, "" when none.
func (s *Store) FinishThen(ctx context.Context, conversationID, runID string, start StartRun, then func(ctx context.Context, tx pgx.Tx, next string) error) (next string, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		next = ""
		if err := s.finish(ctx, tx, conversationID, runID, start, &next); err != nil || then == nil {
			return err
		}
		return then(ctx, tx, next)
	})
	return next, err
}

func (s *Store) finish(ctx context.Context, tx pgx.Tx, conversationID, runID string, start StartRun, next *string) error {
	conv, err := get(ctx, tx, conversationID, true)
	if err != nil {
		return err
	}
	if conv.ActiveRun != runID {
		return nil // finished already (a rerun of its last job)
	}
	rows, err := tx.Query(ctx, `UPDATE core.pending_input SET state = 'promoted', updated_at = now()
		WHERE conversation_id = $1 AND state IN ('pending', 'leased') RETURNING id, text`, conversationID)
	if err != nil {
		return fmt.Errorf("promote the input waiting in %s: %w", conversationID, err)
	}
	type waiting struct {
		id   int64
		text string
	}
	ws, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (waiting, error) {
		var w waiting
		err := r.Scan(&w.id, &w.text)
		return w, err
	})
	if err != nil {
		return fmt.Errorf("promote the input waiting in %s: %w", conversationID, err)
	}
	if len(ws) == 0 {
		_, err := tx.Exec(ctx, `UPDATE core.conversations SET active_run = NULL WHERE id = $1`, conversationID)
		return err
	}
	// promoted rows come back in no particular order: keep the owner's
	slices.SortFunc(ws, func(a, b waiting) int { return cmp.Compare(a.id, b.id) })
	for _, w := range ws {
		if _, err := Append(ctx, tx, conversationID, "", KindUser, map[string]any{"text": w.text}); err != nil {
			return err
		}
	}
	if *next, err = s.begin(ctx, tx, conv); err != nil {
		return err
	}
	conv.ActiveRun = *next
	return start(ctx, tx, conv, *next)
}

// Pending is input waiting for a run.
type Pending struct {
	ID   int64  `json:"id"`   // its row, increasing in the order it was sent
	Text string `json:"text"` // what the owner wrote
}

// Lease takes the input waiting for the conversation, in order, for run's next step: the
// rows become leased, not delivered (a step that never happens hands them back).
func (s *Store) Lease(ctx context.Context, conversationID, runID string) ([]Pending, error) {
	rows, err := s.pool.Query(ctx, `UPDATE core.pending_input SET state = 'leased', run_id = $2, updated_at = now()
		WHERE conversation_id = $1 AND state = 'pending' RETURNING id, text`, conversationID, runID)
	if err != nil {
		return nil, fmt.Errorf("lease input of %s: %w", conversationID, err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Pending, error) {
		var p Pending
		err := r.Scan(&p.ID, &p.Text)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("lease input of %s: %w", conversationID, err)
	}
	slices.SortFunc(ps, func(a, b Pending) int { return cmp.Compare(a.ID, b.ID) })
	return ps, nil
}

// Deliver marks leased input delivered, in tx: a model has seen it. Each becomes an
// owner-adds entry of the transcript.
func Deliver(ctx context.Context, tx pgx.Tx, conversationID, runID string, ps []Pending) error {
	for _, p := range ps {
		tag, err := tx.Exec(ctx, `UPDATE core.pending_input SET state = 'delivered', updated_at = now() WHERE id = $1 AND state = 'leased'`, p.ID)
		if err != nil {
			return fmt.Errorf("deliver input %d: %w", p.ID, err)
		}
		if tag.RowsAffected() == 0 {
			continue
		}
		if _, err := Append(ctx, tx, conversationID, runID, KindOwnerAdds, map[string]any{"text": p.Text}); err != nil {
			return err
		}
	}
	return nil
}

// Open reads in tx what a turn of run starts from. inFlight reports whether run is the
// conversation's run in flight; when it is, input a step leased and never delivered (it
// failed, or buddi stopped) is handed back, and entries is the transcript, scrubbed.
func (s *Store) Open(ctx context.Context, tx pgx.Tx, conversationID, runID string) (entries []Entry, inFlight bool, err error) {
	conv, err := get(ctx, tx, conversationID, false)
	if err != nil || conv.ActiveRun != runID {
		return nil, false, err
	}
	if _, err := tx.Exec(ctx, releaseSQL, conversationID); err != nil {
		return nil, false, fmt.Errorf("release input of %s: %w", conversationID, err)
	}
	entries, err = s.transcript(ctx, tx, conversationID)
	return entries, err == nil, err
}

const releaseSQL = `UPDATE core.pending_input SET state = 'pending', updated_at = now()
		WHERE conversation_id = $1 AND state = 'leased'`

// Release hands leased input of the conversation back (pending again): the step that leased
// it did not happen.
func (s *Store) Release(ctx context.Context, conversationID string) error {
	if _, err := s.pool.Exec(ctx, releaseSQL, conversationID); err != nil {
		return fmt.Errorf("release input of %s: %w", conversationID, err)
	}
	return nil
}

// Ask records a held question of agent's run in the conversation, for ttl (the claim on the
// owner's next message).
func Ask(ctx context.Context, q Querier, conversationID, agent, runID, question string, ttl time.Duration) error {
	if _, err := q.Exec(ctx, `INSERT INTO core.questions (conversation_id, agent, run_id, question, expires_at)
		VALUES ($1, $2, $3, $4, now() + $5::interval)
		ON CONFLICT (conversation_id) DO UPDATE SET agent = $2, run_id = $3, question = $4, asked_at = now(), expires_at = now() + $5::interval`,
		conversationID, agent, runID, question, ttl.String()); err != nil {
		return fmt.Errorf("hold the question of %s: %w", conversationID, err)
	}
	return nil
}

// HeldQuestions counts the live held questions by agent: the attention model's dots.
func (s *Store) HeldQuestions(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT agent, count(*) FROM core.questions WHERE expires_at > now() GROUP BY agent`)
	if err != nil {
		return nil, fmt.Errorf("count held questions: %w", err)
	}
	out := map[string]int{}
	for rows.Next() {
		var a string
		var n int
		if err := rows.Scan(&a, &n); err != nil {
			return nil, err
		}
		out[a] = n
	}
	return out, rows.Err()
}
