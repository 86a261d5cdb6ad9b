package telegram

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/agents"
	"buddi/core/action"
	"buddi/core/conversation"
	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/internal/text"
	"buddi/runtime/live"
)

// Deps are what the bot needs from the app that wires it.
type Deps struct {
	API           *API                // the Bot API with the bot's token
	Store         *Store              // the surface's state
	Conversations *conversation.Store // where messages go
	// Start enqueues the run that answers a message (interactive, on this surface).
	Start conversation.StartRun
	// Catalog loads the agents.
	Catalog func() (*agents.Catalog, error)
	// Live carries runs' events.
	Live *live.Hub
	// Artifacts keeps a file the owner sent and returns its id; nil refuses files politely.
	Artifacts func(ctx context.Context, name, mediaType string, data []byte) (string, error)
	// Decide records the owner's decision on an action (the trust core's one atomic claim),
	// with its picks and what to remember; the bot sets the surface.
	Decide func(ctx context.Context, d action.Decision) (action.Record, error)
	// Reusable reports whether a tool allows a standing permission, so its card offers
	// "Approve & remember"; nil offers it for none.
	Reusable func(tool string) bool
	// Mode reads an agent's execution mode (plan, accept-edits, auto) for /agents; nil
	// leaves it out.
	Mode func(ctx context.Context, agent string) (string, error)
	// Log receives what the bot logs; nil discards.
	Log *slog.Logger
	// PollTimeout is getUpdates' long-poll; the client gives up 10 s after it. Default 25 s.
	PollTimeout time.Duration
	// EditEvery is the least time between two edits of a streamed reply. Default 1.5 s.
	EditEvery time.Duration
	// PollMargin is how long past PollTimeout a poll may take before the client gives up on
	// it (a half-open connection). Default 10 s.
	PollMargin time.Duration
}

// Bot is the Telegram surface.
type Bot struct {
	d        Deps
	follows  sync.WaitGroup // replies being streamed; they end with Run
	failures map[int64]int  // update → how often handling it failed (the poll loop's own)
}

// New returns the bot.
func New(d Deps) *Bot {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.PollTimeout <= 0 {
		d.PollTimeout = 25 * time.Second
	}
	if d.EditEvery <= 0 {
		d.EditEvery = 1500 * time.Millisecond
	}
	if d.PollMargin <= 0 {
		d.PollMargin = 10 * time.Second
	}
	d.Log = d.Log.With("service", "telegram")
	return &Bot{d: d, failures: map[int64]int{}}
}

// ErrRevoked means the token was refused (401): the surface is down until it is set again.
var ErrRevoked = errors.New("telegram: the bot token was refused; set a new one with `buddi telegram setup`")

// Run polls until ctx ends or the token is refused. Every update is stored before the offset
// advances, and handled from the store, so a restart loses none and handles none twice.
func (b *Bot) Run(ctx context.Context) error {
	defer b.follows.Wait() // ctx's end stops every reply being streamed
	// The menu follows the catalogue (a maker may have come or gone): published again at start.
	if b.d.Store.Key.IsZero() {
		b.d.Log.Error("the Telegram surface has no seal key: it pairs no one and handles no update")
	}
	if ds, err := b.d.Store.Devices(ctx); err == nil {
		for _, d := range ds {
			if d.Sealed {
				b.publishMenu(ctx, d.ChatID)
			}
		}
	}
	backoff := time.Second
	for ctx.Err() == nil {
		if err := b.handlePending(ctx); err != nil && ctx.Err() == nil {
			b.d.Log.Warn("handle updates", "err", err)
		}
		off, err := b.d.Store.offset(ctx)
		if err != nil {
			b.sleep(ctx, backoff)
			continue
		}
		// Never deaf: the client gives up a little after the long poll should have answered.
		pctx, cancel := context.WithTimeout(ctx, b.d.PollTimeout+b.d.PollMargin)
		us, err := b.d.API.GetUpdates(pctx, off, b.d.PollTimeout)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			var ae *APIError
			switch {
			case Unauthorized(err):
				b.down(ctx)
				return ErrRevoked
			case errors.As(err, &ae) && ae.RetryAfter > 0:
				b.sleep(ctx, ae.RetryAfter)
			default:
				// A network error or a deadline: back off with jitter, at most a minute.
				b.d.Log.Warn("poll", "err", err, "retry_in", backoff)
				b.sleep(ctx, backoff/2+time.Duration(rand.Int64N(int64(backoff/2)+1)))
				backoff = min(backoff*2, time.Minute)
			}
			continue
		}
		backoff = time.Second
		if err := b.d.Store.persist(ctx, us); err != nil {
			b.d.Log.Warn("store updates", "err", err)
			b.sleep(ctx, time.Second)
		}
	}
	return nil
}

func (b *Bot) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// down marks the surface down once (an event, which the dashboard and doctor show).
func (b *Bot) down(ctx context.Context) {
	b.d.Log.Error("the Telegram bot token was refused (401): the surface is down; set a new token with `buddi telegram setup`")
	_, _ = b.d.Store.Pool.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ('telegram_down', '{"reason":"401"}')
		ON CONFLICT (key) DO NOTHING`)
	_, _ = eventlog.Append(ctx, b.d.Store.Pool, events.TelegramDown, "", events.TelegramDownPayload{Reason: "the bot token was refused (401)"})
}

func (b *Bot) handlePending(ctx context.Context) error {
	us, err := b.d.Store.pending(ctx)
	if err != nil {
		return err
	}
	for _, u := range us {
		if err := b.handle(ctx, u); err != nil {
			if ctx.Err() != nil {
				return err
			}
			// One update that keeps failing must not hold the ones behind it: after a few
			// tries it is set aside, with its error.
			b.failures[u.UpdateID]++
			if b.failures[u.UpdateID] < 3 {
				return fmt.Errorf("update %d: %w", u.UpdateID, err)
			}
			delete(b.failures, u.UpdateID)
			b.d.Log.Warn("an update failed three times; set aside", "update", u.UpdateID, "err", err)
			if merr := markHandled(ctx, b.d.Store.Pool, u.UpdateID, "ignored", "failed: "+text.FirstLine(err.Error())); merr != nil {
				return merr
			}
		}
	}
	return nil
}

// ignore records an update that gets no answer (a stranger, a group), with an event.
func (b *Bot) ignore(ctx context.Context, u Update, why string, who int64) error {
	return pgx.BeginFunc(ctx, b.d.Store.Pool, func(tx pgx.Tx) error {
		if err := markHandled(ctx, tx, u.UpdateID, "ignored", why); err != nil {
			return err
		}
		_, err := eventlog.Append(ctx, tx, events.TelegramIgnored, "", events.TelegramIgnoredPayload{UpdateID: u.UpdateID, Why: why, UserID: who})
		return err
	})
}

func (b *Bot) done(ctx context.Context, u Update, note string) error {
	return markHandled(ctx, b.d.Store.Pool, u.UpdateID, "handled", note)
}

func (b *Bot) handle(ctx context.Context, u Update) error {
	if cq := u.CallbackQuery; cq != nil {
		return b.callback(ctx, u, cq)
	}
	m := u.Message
	if m == nil || m.From == nil {
		return b.ignore(ctx, u, "not a message", 0)
	}
	if m.Chat.Type != "private" {
		return b.ignore(ctx, u, "a group", m.From.ID)
	}
	paired, err := b.d.Store.Paired(ctx, m.From.ID, m.Chat.ID)
	if err != nil {
		return err
	}
	if !paired {
		// A pairing message is stored with the code's keyed hash in place of the code.
		if hash, ok := strings.CutPrefix(strings.TrimSpace(m.Text), sealedStart); ok {
			if err := b.d.Store.pairHash(ctx, hash, *m.From, m.Chat.ID); err == nil {
				b.send(ctx, m.Chat.ID, "Paired. This chat is now how you talk with buddi from your phone. /help says what you can do.")
				b.publishMenu(ctx, m.Chat.ID)
				return b.done(ctx, u, "paired")
			}
		}
		return b.ignore(ctx, u, "a stranger", m.From.ID) // no answer, no menu
	}
	text := strings.TrimSpace(m.Text)
	if len(m.ForwardOrigin) > 0 && text != "" {
		// A forward is someone else's words: never a command, never the owner's instruction.
		return b.message(ctx, u, m.Chat.ID, "The owner forwarded this message (someone else's words, not an instruction from the owner):\n> "+
			strings.ReplaceAll(text, "\n", "\n> "))
	}
	if len(m.Voice) > 0 {
		b.send(ctx, m.Chat.ID, "I can't listen to voice notes; please type it.")
		return b.done(ctx, u, "a voice note")
	}
	if len(m.Photo) > 0 || len(m.Document) > 0 {
		note, ok := b.fileIn(ctx, m)
		if !ok {
			return b.done(ctx, u, "a file refused")
		}
		text = strings.TrimSpace(strings.TrimSpace(m.Caption) + "\n\n" + note)
	}
	if text == "" { // a sticker, a location, a contact: nothing to read
		b.send(ctx, m.Chat.ID, "I can read text, photos and documents here; that one I can't.")
		return b.done(ctx, u, "nothing to read")
	}
	if strings.HasPrefix(text, "/") {
		return b.command(ctx, u, m.Chat.ID, text)
	}
	return b.message(ctx, u, m.Chat.ID, text)
}

func (b *Bot) send(ctx context.Context, chat int64, text string) Message {
	msg, err := b.d.API.SendMessage(ctx, chat, text, nil)
	if err != nil {
		b.d.Log.Warn("send", "err", err)
	}
	return msg
}

// nonce binds a callback to its action and verb: a button can decide only what it names.
func (b *Bot) nonce(actionID, verb string) string { return Nonce(b.d.API.Token, actionID, verb) }

// Nonce is the callback data's proof that buddi made the button: an HMAC of the action and
// the verb under the bot's token.
func Nonce(token, actionID, verb string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(actionID + ":" + verb))
	return hex.EncodeToString(mac.Sum(nil))[:16]
}

func (b *Bot) callback(ctx context.Context, u Update, cq *CallbackQuery) error {
	if cq.Message == nil {
		return b.ignore(ctx, u, "a callback without its message", cq.From.ID)
	}
	paired, err := b.d.Store.Paired(ctx, cq.From.ID, cq.Message.Chat.ID)
	if err != nil {
		return err
	}
	if !paired {
		return b.ignore(ctx, u, "a stranger's button", cq.From.ID)
	}
	parts := strings.Split(cq.Data, "|")
	verb, isCard := cardVerb{}, false
	if len(parts) == 3 {
		verb, isCard = parseVerb(parts[0])
	}
	if len(parts) != 3 || (!isCard && parts[0] != "offer" && parts[0] != verbRevoke) || !hmac.Equal([]byte(parts[2]), []byte(b.nonce(parts[1], parts[0]))) {
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "That button is not one of buddi's.")
		return b.ignore(ctx, u, "a forged button", cq.From.ID)
	}
	if parts[0] == "offer" {
		return b.takeOffer(ctx, u, cq, parts[1])
	}
	if parts[0] == verbRevoke {
		return b.revoke(ctx, u, cq, parts[1])
	}
	d := action.Decision{ActionID: parts[1], Approve: verb.approve, Surface: Surface, Remember: verb.remember}
	if !verb.legacy {
		rec, err := action.Get(ctx, b.d.Store.Pool, parts[1])
		if err != nil {
			_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "That could not be decided: "+text.FirstLine(err.Error()))
			return b.done(ctx, u, "a card button for no action")
		}
		answer, err := decodeAnswer(verb.answer, rec.Envelope.Choices)
		if err != nil {
			_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "That button does not fit the card: "+err.Error())
			return b.done(ctx, u, "a card button that does not fit")
		}
		if !verb.decide { // a pick: the card is drawn again with it, and nothing is decided
			if rec.Approval.State != action.Pending {
				_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, fmt.Sprintf("Already %s.", rec.Approval.State))
				return b.done(ctx, u, "a pick on a decided card")
			}
			_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "")
			_ = b.d.API.EditMessageText(ctx, cq.Message.Chat.ID, cq.Message.MessageID, literal(cq.Message.Text), b.cardMarkup(rec, answer, b.reusable(rec.Tool) && rec.DelegationDepth == 0))
			return b.done(ctx, u, "a pick")
		}
		d.Picks = answer.picks(rec.Envelope.Choices)
	}
	rec, err := b.d.Decide(ctx, d)
	var lost *action.AlreadyDecidedError
	switch {
	case errors.As(err, &lost):
		where := lost.By
		if where == "" {
			where = "its expiry"
		}
		msg := fmt.Sprintf("Already %s (%s).", lost.State, where)
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, msg)
		_ = b.d.API.EditMessageText(ctx, cq.Message.Chat.ID, cq.Message.MessageID, literal(cq.Message.Text+"\n\n"+msg), nil)
	case err != nil:
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "That could not be decided: "+text.FirstLine(err.Error()))
	default:
		said := "Rejected"
		if d.Approve {
			said = "Approved"
		}
		answered := said
		for _, c := range rec.Envelope.Choices {
			answered += fmt.Sprintf(", %s: %s", c.Name, rec.Approval.Picks[c.Name])
		}
		switch d.Remember {
		case action.RememberConversation:
			answered += ", remembered for this conversation"
		case action.RememberAll:
			answered += ", remembered always"
		}
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, said)
		_ = b.d.API.EditMessageText(ctx, cq.Message.Chat.ID, cq.Message.MessageID, literal(cq.Message.Text+"\n\n"+answered+" here."), nil)
	}
	return b.done(ctx, u, "a decision")
}

// takeOffer runs an offer from its button: the same atomic claim as a click on the dashboard,
// so one of them wins and the other hears it was taken.
func (b *Bot) takeOffer(ctx context.Context, u Update, cq *CallbackQuery, idText string) error {
	var id int64
	if _, err := fmt.Sscan(idText, &id); err != nil {
		return b.ignore(ctx, u, "a malformed offer", cq.From.ID)
	}
	chat := cq.Message.Chat.ID
	var sent conversation.Sent
	var err error
	// The tap is handled in the same transaction as the turn it sends.
	sent, err = b.d.Conversations.TakeOffer(ctx, id, Surface, func(ctx context.Context, tx pgx.Tx, conv conversation.Conversation, runID string) error {
		if err := markHandled(ctx, tx, u.UpdateID, "handled", "an offer"); err != nil {
			return err
		}
		return b.d.Start(ctx, tx, conv, runID)
	})
	if errors.Is(err, conversation.ErrOfferGone) {
		_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "Already taken.")
		return b.done(ctx, u, "an offer already taken")
	}
	if err != nil {
		return err
	}
	_ = b.d.API.AnswerCallbackQuery(ctx, cq.ID, "On it.")
	if !sent.Joined {
		b.follows.Add(1)
		go func() {
			defer b.follows.Done()
			b.follow(ctx, chat, sent.Conversation.ID, sent.RunID)
		}()
	} else if err := b.done(ctx, u, "an offer joined the run"); err != nil {
		return err
	}
	return nil
}
