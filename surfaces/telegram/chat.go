package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"buddi/agents"
	"buddi/core/conversation"
)

// MaxMessage is Telegram's cap on one message's text.
const MaxMessage = 4096

func (b *Bot) publishMenu(ctx context.Context, chat int64) {
	cmds := []Command{{"help", "What you can do here"}, {"agents", "Who is there"}, {"use", "Talk to another agent: /use @handle"},
		{"status", "How things stand"}, {"recap", "What happened"}, {"approvals", "What waits for you"}, {"permissions", "What agents may do unasked"}, {"whoami", "Who you are here"}, {"id", "This chat's ids"}}
	if cat, err := b.d.Catalog(); err == nil {
		if _, err := cat.ForRole("maker"); err == nil {
			cmds = append(cmds, Command{"new", "Make a new agent"})
		}
	}
	if err := b.d.API.SetMyCommands(ctx, chat, cmds); err != nil {
		b.d.Log.Warn("publish the menu", "err", err)
	}
}

const helpText = `Write to talk with your agent; a message starting with @handle goes to that agent once.
/use @handle switches who you talk to. /agents lists them.
/status and /recap ask the agents that hold those roles. /approvals lists what waits for you; approve or reject with the buttons on a card (a typed "yes" decides nothing).
/permissions lists what you let agents do without asking, each with a Revoke button.
Replies here are short: the owner reads this on a phone, between other things. Ask for detail when you want it.`

func (b *Bot) command(ctx context.Context, u Update, chat int64, text string) error {
	name, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	name, _, _ = strings.Cut(name, "@")
	arg = strings.TrimSpace(arg)
	cat, err := b.d.Catalog()
	if err != nil {
		b.send(ctx, chat, "The agents could not be loaded; `buddi agents list` on the machine says why.")
		return b.done(ctx, u, "command")
	}
	role := func(r, prompt string) error {
		a, err := cat.ForRole(r)
		if err != nil {
			b.send(ctx, chat, fmt.Sprintf("No agent holds the %s role: give one `roles: [%s]` in its file.", r, r))
			return b.done(ctx, u, "command")
		}
		return b.to(ctx, u, chat, a, prompt)
	}
	switch name {
	case "help", "start":
		b.send(ctx, chat, helpText)
	case "id":
		b.send(ctx, chat, fmt.Sprintf("This chat is %d.", chat))
	case "whoami":
		b.send(ctx, chat, "You are buddi's owner, paired with this chat.")
	case "agents":
		var lines []string
		for _, a := range cat.All() {
			line := fmt.Sprintf("%s %s", a.Handle, a.Name)
			if b.d.Mode != nil {
				mode, err := b.d.Mode(ctx, a.ID)
				if err != nil {
					return err
				}
				line += " · " + mode + " mode"
			}
			lines = append(lines, line)
		}
		if b.d.Mode != nil {
			lines = append(lines, "", modesNote)
		}
		b.send(ctx, chat, strings.Join(lines, "\n"))
	case "use":
		a, ok := cat.ByHandle(arg)
		if !ok {
			b.send(ctx, chat, "No agent "+arg+": /agents lists them.")
			break
		}
		if err := b.d.Store.SetActiveAgent(ctx, chat, a.ID); err != nil {
			return err
		}
		b.send(ctx, chat, "You are talking with "+a.Handle+" now.")
	case "approvals":
		var n int
		if err := b.d.Store.Pool.QueryRow(ctx, `SELECT count(*) FROM core.approvals WHERE state = 'pending'`).Scan(&n); err != nil {
			return err
		}
		b.send(ctx, chat, fmt.Sprintf("%d approvals wait for you; each came here as a card with its buttons (and they are on the dashboard's Home).", n))
	case "permissions":
		return b.permissions(ctx, u, chat)
	case "status":
		return role("overview", "How do things stand? Give me the short overview.")
	case "recap":
		return role("recap", "Give me the recap: what happened since we last spoke.")
	case "new":
		return role("maker", "I want a new agent.")
	default:
		b.send(ctx, chat, "I don't know /"+name+": /help lists what I do.")
	}
	return b.done(ctx, u, "command")
}

// message routes text: a leading @handle sends it to that agent once; otherwise the chat's
// active agent, or the default.
func (b *Bot) message(ctx context.Context, u Update, chat int64, text string) error {
	cat, err := b.d.Catalog()
	if err != nil {
		return err
	}
	if strings.HasPrefix(text, "@") {
		handle, rest, _ := strings.Cut(text, " ")
		if a, ok := cat.ByHandle(handle); ok && strings.TrimSpace(rest) != "" {
			return b.to(ctx, u, chat, a, strings.TrimSpace(rest))
		}
	}
	id, err := b.d.Store.ActiveAgent(ctx, chat)
	if err != nil {
		return err
	}
	a, ok := cat.ByID(id)
	if !ok {
		if a, err = cat.Default(); err != nil {
			b.send(ctx, chat, "No agent is the default: give one `default: true` in its file.")
			return b.done(ctx, u, "no agent")
		}
	}
	return b.to(ctx, u, chat, a, text)
}

// to sends text to agent a as the owner's message, marking the update handled in the same
// transaction, and follows the run's reply into the chat.
func (b *Bot) to(ctx context.Context, u Update, chat int64, a agents.Agent, text string) error {
	sent, err := b.d.Conversations.Send(ctx, conversation.Message{Agent: a.ID, Surface: Surface, Text: text, Rollover: a.Rollover(),
		Also: func(ctx context.Context, tx pgx.Tx) error {
			return markHandled(ctx, tx, u.UpdateID, "handled", "to "+a.ID)
		}}, b.d.Start)
	if err != nil {
		return err
	}
	if sent.Ended != nil {
		b.send(ctx, chat, sent.Ended.CarriedOver)
	}
	if sent.Joined {
		b.send(ctx, chat, "Added to the reply in progress.")
		return nil
	}
	b.follows.Add(1)
	go func() {
		defer b.follows.Done()
		b.follow(ctx, chat, sent.Conversation.ID, sent.RunID)
	}()
	return nil
}

// follow streams a run's reply: "Working on it…" first, then the message edited as text
// arrives (at most every EditEvery), cards with their buttons, and the final text split at
// MaxMessage between paragraphs.
func (b *Bot) follow(ctx context.Context, chat int64, conv, runID string) {
	if b.d.Live == nil {
		return
	}
	sub := b.d.Live.Subscribe(conv, runID)
	defer sub.Close()
	first, err := b.d.API.SendMessage(ctx, chat, "Working on it…", nil)
	if err != nil {
		b.d.Log.Warn("send", "err", err)
		return
	}
	var text strings.Builder
	shown, lastEdit := "", time.Time{}
	edit := func(force bool) {
		cur := text.String()
		if cur == "" || cur == shown || (!force && time.Since(lastEdit) < b.d.EditEvery) {
			return
		}
		part := split(cur)[0]
		if err := b.d.API.EditMessageText(ctx, chat, first.MessageID, part, nil); err != nil {
			b.d.Log.Warn("edit", "err", err)
		}
		shown, lastEdit = cur, time.Now()
	}
	tick := time.NewTicker(b.d.EditEvery)
	defer tick.Stop()
	timeout := time.NewTimer(40 * time.Minute)
	defer timeout.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timeout.C:
			return
		case <-tick.C:
			edit(false)
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			if ev.RunID != runID {
				continue
			}
			switch ev.Type {
			case "text":
				text.WriteString(ev.Text)
				edit(false)
			case "tool.result":
				var d struct {
					Renderer string               `json:"renderer"`
					Offers   []conversation.Offer `json:"offers"`
				}
				if ev.Tool == "conversation.offer" && json.Unmarshal(ev.Data, &d) == nil && d.Renderer == "offers" && len(d.Offers) > 0 {
					var row []Button
					for _, o := range d.Offers {
						id := fmt.Sprint(o.ID)
						row = append(row, Button{Text: o.Label, CallbackData: "offer|" + id + "|" + b.nonce(id, "offer")})
					}
					if _, err := b.d.API.SendMessage(ctx, chat, "Next, if you like:", &Markup{InlineKeyboard: [][]Button{row}}); err != nil {
						b.d.Log.Warn("send offers", "err", err)
					}
				}
				if text := canvasText(ev.View); text != "" { // no canvas here: its view as text
					if _, err := b.d.API.SendMessage(ctx, chat, text, nil); err != nil {
						b.d.Log.Warn("send a view as text", "err", err)
					}
				}
			case "tool.call":
				if ev.Tool == "conversation.ask" { // a question is shown as a question; the next message answers it
					var a struct{ Question string }
					if json.Unmarshal([]byte(ev.Args), &a) == nil && a.Question != "" {
						if _, err := b.d.API.SendMessage(ctx, chat, "❓ "+a.Question, nil); err != nil {
							b.d.Log.Warn("send a question", "err", err)
						}
					}
				}
			case "approval":
				if err := b.sendCard(ctx, chat, ev.ActionID, ev.Text, ev.Preview); err != nil {
					b.d.Log.Warn("send a card", "err", err)
				}
			case "run.waiting", "run.retrying":
				// The provider made buddi wait, or the attempt broke off (its text is void):
				// the reply in progress says so, and when buddi tries again.
				if ev.Type == "run.retrying" {
					text.Reset()
				}
				if err := b.d.API.EditMessageText(ctx, chat, first.MessageID, clip(ev.Text), nil); err != nil {
					b.d.Log.Warn("edit", "err", err)
				}
				shown = ""
			case "run.failed":
				msg := ev.Text
				if text.Len() > 0 {
					msg = text.String() + "\n\n" + msg
				}
				_ = b.d.API.EditMessageText(ctx, chat, first.MessageID, clip(msg), nil)
				return
			case "run.finished":
				parts := split(text.String())
				if len(parts) == 0 || parts[0] == "" {
					parts = []string{"Done."}
				}
				if parts[0] != shown {
					_ = b.d.API.EditMessageText(ctx, chat, first.MessageID, parts[0], nil)
				}
				for _, p := range parts[1:] {
					if _, err := b.d.API.SendMessage(ctx, chat, p, nil); err != nil {
						b.d.Log.Warn("send", "err", err)
					}
				}
				return
			}
		}
	}
}

// split cuts text into messages of at most MaxMessage characters, between paragraphs where
// it can, else between lines, else anywhere.
func split(text string) []string {
	var out []string
	for len([]rune(text)) > MaxMessage {
		r := []rune(text)
		head := string(r[:MaxMessage])
		cut := strings.LastIndex(head, "\n\n")
		if cut < MaxMessage/4 {
			cut = strings.LastIndex(head, "\n")
		}
		if cut < MaxMessage/4 {
			cut = len(head)
		}
		out = append(out, strings.TrimRight(text[:cut], "\n"))
		text = strings.TrimLeft(text[cut:], "\n")
	}
	return append(out, text)
}

func clip(s string) string {
	if r := []rune(s); len(r) > MaxMessage {
		return string(r[:MaxMessage-1]) + "…"
	}
	return s
}

// modesNote ends /agents: what the modes mean here, and where the owner changes them.
const modesNote = "From Telegram an agent's calls run at most in accept-edits mode (settings.json's remote_max_mode can raise it): " +
	"what would run without asking in auto mode asks first. Change an agent's mode on its card in the dashboard's Settings → Agents, or with `buddi agents mode @handle plan|accept-edits|auto`."
