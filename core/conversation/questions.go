package conversation

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Question is a held question: what an agent's run asked the owner, which claims the owner's
// next message in its conversation until it expires.
type Question struct {
	ConversationID string    `json:"conversation_id"` // the conversation it was asked in
	Agent          string    `json:"agent"`           // the agent that asked (its id)
	RunID          string    `json:"run_id"`          // the run that asked
	Text           string    `json:"question"`        // the question, as the owner reads it
	AskedAt        time.Time `json:"asked_at"`        // when it was asked
	ExpiresAt      time.Time `json:"expires_at"`      // when it stops claiming the next message
}

// Questions lists the live held questions, the oldest first: what Home shows the owner to
// answer. The count by agent is HeldQuestions.
func (s *Store) Questions(ctx context.Context) ([]Question, error) {
	rows, err := s.pool.Query(ctx, `SELECT conversation_id::text, agent, run_id::text, question, asked_at, expires_at
		FROM core.questions WHERE expires_at > now() ORDER BY asked_at, conversation_id`)
	if err != nil {
		return nil, fmt.Errorf("list held questions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Question, error) {
		var q Question
		err := r.Scan(&q.ConversationID, &q.Agent, &q.RunID, &q.Text, &q.AskedAt, &q.ExpiresAt)
		return q, err
	})
	if err != nil {
		return nil, fmt.Errorf("list held questions: %w", err)
	}
	return out, nil
}
