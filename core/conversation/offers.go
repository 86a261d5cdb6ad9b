package conversation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/core/redact"
)

// OfferTTL is how long an offer can be taken.
const OfferTTL = 24 * time.Hour

// Offer is one next move an agent offered: taking it runs that agent with its prompt, and
// every tier, approval and preview applies as usual.
type Offer struct {
	ID    int64  `json:"id"`    // the offer; a tap carries this and nothing else
	Label string `json:"label"` // the button's words
}

// ErrOfferGone means the offer was taken already (on any surface) or expired.
var ErrOfferGone = errors.New("that offer was already taken, or has expired")

// AddOffers records a run's offers in its conversation, through q.
func AddOffers(ctx context.Context, q Querier, conversationID, agent, runID string, labels, prompts []string) ([]Offer, error) {
	var out []Offer
	for i := range labels {
		label, prompt := redact.Storable(labels[i]), redact.Storable(prompts[i]) // text columns refuse a NUL
		var id int64
		if err := q.QueryRow(ctx, `INSERT INTO core.offers (conversation_id, agent, run_id, label, prompt, expires_at)
			VALUES ($1, $2, $3, $4, $5, now() + $6::interval) RETURNING id`, conversationID, agent, runID, label, prompt, OfferTTL.String()).Scan(&id); err != nil {
			return nil, fmt.Errorf("record an offer: %w", err)
		}
		out = append(out, Offer{ID: id, Label: label})
	}
	return out, nil
}

// TakeOffer claims offer id for surface (one atomic claim: a tap on Telegram and a click on
// the dashboard give one run and one ErrOfferGone) and sends its prompt as the owner's turn in
// the offer's conversation, stamped offer:<label>, in the same transaction.
func (s *Store) TakeOffer(ctx context.Context, id int64, surface string, start StartRun) (Sent, error) {
	var conv, agent, label, prompt string
	err := s.pool.QueryRow(ctx, `SELECT conversation_id::text, agent, label, prompt FROM core.offers
		WHERE id = $1 AND taken_at IS NULL AND expires_at > now()`, id).Scan(&conv, &agent, &label, &prompt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Sent{}, ErrOfferGone
	}
	if err != nil {
		return Sent{}, err
	}
	return s.Send(ctx, Message{ConversationID: conv, Resume: true, Agent: agent, Surface: surface, Text: prompt, Offer: label,
		Also: func(ctx context.Context, tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE core.offers SET taken_at = now(), taken_by = $2 WHERE id = $1 AND taken_at IS NULL AND expires_at > now()`, id, surface)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return ErrOfferGone
			}
			return nil
		}}, start)
}
