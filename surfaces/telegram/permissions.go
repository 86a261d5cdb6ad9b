package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
)

// verbRevoke is the callback verb of a standing permission's Revoke button.
const verbRevoke = "revoke"

// permissions answers /permissions: each live standing permission (what an agent may do
// without asking), with a signed Revoke button. Revoking is the owner's, on an owner surface;
// no model-facing tool can do it.
func (b *Bot) permissions(ctx context.Context, u Update, chat int64) error {
	list, err := action.ListStanding(ctx, b.d.Store.Pool)
	if err != nil {
		return err
	}
	live := 0
	for _, p := range list {
		if p.RevokedAt != nil {
			continue
		}
		live++
		id := strconv.FormatInt(p.ID, 10)
		if _, err := b.d.API.SendMessage(ctx, chat, literal(permissionLine(p)),
			&Markup{InlineKeyboard: [][]Button{{b.button("Revoke", id, verbRevoke)}}}); err != nil {
			return err
		}
	}
	if live == 0 {
		b.send(ctx, chat, "No agent may do anything without asking: a card's “Approve & remember” adds a permission.")
	}
	return b.done(ctx, u, "command")
}

// permissionLine says what a standing permission lets which agent do, and where.
func permissionLine(p action.Standing) string {
	where := "in every conversation"
	if p.ConversationID != "" {
		where = "in one conversation"
	}
	return fmt.Sprintf("%s may run %s (version %s) without asking, %s; granted on %s, %s.",
		p.Agent, p.Tool, p.ToolVersion, where, p.GrantedBy, p.GrantedAt.UTC().Format("2 Jan 2006 15:04 UTC"))
}

// revoke ends the standing permission a signed Revoke button names, and says so on its message.
func (b *Bot) revoke(ctx context.Context, u Update, cq *CallbackQuery, idText string) error {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "That button names no permission.")
		return b.done(ctx, u, "a revoke button without a permission")
	}
	err = pgx.BeginFunc(ctx, b.d.Store.Pool, func(tx pgx.Tx) error { return action.Revoke(ctx, tx, id, Surface) })
	switch {
	case errors.Is(err, action.ErrNotFound):
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "It was revoked already.")
	case err != nil:
		return err
	default:
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "Revoked.")
		_ = b.d.API.EditMessageText(ctx, cq.Message.Chat.ID, cq.Message.MessageID, literal(cq.Message.Text+"\n\nRevoked: the agent asks again."), nil)
	}
	return b.done(ctx, u, "a permission revoked")
}
