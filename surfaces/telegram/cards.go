package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"buddi/core/action"
	"buddi/plugins"
)

// A card's buttons answer it fully: an option for each declared choice, Approve, Reject and,
// for a tool that allows it, "Approve & remember". Telegram keeps no state for a button and
// allows 64 bytes of callback data, so a button carries the whole answer so far: a verb
// letter and one character per declared choice (the option's index, or '-' for none yet),
// then the action and the nonce that binds both. A tap on an option redraws the keyboard
// with that option marked and the answer in the Approve buttons; only an Approve decides.
//
//	s<picks>  pick: redraw with these picks (decides nothing)
//	a<picks>  approve with these picks
//	c<picks>  approve and remember for this conversation
//	l<picks>  approve and remember for all of the agent's conversations ("always")
//
// "approve" and "reject", the verbs of the cards sent before choices were drawn, still work.

// The most choices, and options in one choice, a card's buttons can carry; a card with more
// is decided on the dashboard or with `buddi approvals approve --pick`.
const (
	maxChoices = 8
	maxOptions = 10
)

// errTooManyChoices says a card cannot be answered with buttons.
var errTooManyChoices = errors.New("this card's choices are too many for buttons: decide it on the dashboard's Home or with `buddi approvals approve --pick`")

// cardAnswer is what a card's buttons carry: the picks so far, by declared choice.
type cardAnswer []int // the option's index for each choice, -1 for none

// initialAnswer is each choice's default (none for a choice without one).
func initialAnswer(choices []plugins.Choice) cardAnswer {
	out := make(cardAnswer, len(choices))
	for i, c := range choices {
		out[i] = -1
		for j, o := range c.Options {
			if o == c.Default {
				out[i] = j
			}
		}
	}
	return out
}

// encode writes the answer as one character per choice.
func (a cardAnswer) encode() string {
	var b strings.Builder
	for _, i := range a {
		if i < 0 {
			b.WriteByte('-')
		} else {
			b.WriteByte(byte('0' + i))
		}
	}
	return b.String()
}

// decodeAnswer reads an answer for choices; it fails on one that does not fit them.
func decodeAnswer(s string, choices []plugins.Choice) (cardAnswer, error) {
	if len(s) != len(choices) {
		return nil, fmt.Errorf("the button answers %d choices, the card declares %d", len(s), len(choices))
	}
	out := make(cardAnswer, len(s))
	for i := range len(s) {
		switch c := s[i]; {
		case c == '-':
			out[i] = -1
		case c >= '0' && int(c-'0') < len(choices[i].Options):
			out[i] = int(c - '0')
		default:
			return nil, fmt.Errorf("the button names no option of %s", choices[i].Name)
		}
	}
	return out, nil
}

// picks are the answer as the trust core takes them; a choice not picked is left out (the
// core takes its default, or says it must be chosen).
func (a cardAnswer) picks(choices []plugins.Choice) map[string]string {
	out := map[string]string{}
	for i, j := range a {
		if j >= 0 {
			out[choices[i].Name] = choices[i].Options[j]
		}
	}
	return out
}

// button is a card's button for verb on actionID, signed.
func (b *Bot) button(label, actionID, verb string) Button {
	return Button{Text: label, CallbackData: verb + "|" + actionID + "|" + b.nonce(actionID, verb)}
}

// cardText is a card's text: what the action does, and its choices named.
//
// Every part is the tool's own text, shown as it is: the summary and the choices escaped, the
// preview fenced, so no Markdown of a tool's changes what the owner reads.
func cardText(summary, preview string, choices []plugins.Choice) string {
	card := literal(summary)
	if preview != "" {
		card += "\n\n" + fenced(preview)
	}
	for _, c := range choices {
		line := "Choose " + c.Name + ": " + strings.Join(c.Options, " / ")
		if c.Default != "" {
			line += " (unless you pick, " + c.Default + ")"
		}
		card += "\n\n" + literal(line)
	}
	return card
}

// cardMarkup is a card's keyboard for the answer so far: a row of options per choice (the
// picked one marked), Approve and Reject, and the remembering approvals for a reusable tool
// ("this conversation" only for an action in one).
func (b *Bot) cardMarkup(rec action.Record, answer cardAnswer, reusable bool) *Markup {
	choices := rec.Envelope.Choices
	var rows [][]Button
	for i, c := range choices {
		var row []Button
		for j, o := range c.Options {
			label := o
			if answer[i] == j {
				label = "✓ " + o
			}
			next := append(cardAnswer(nil), answer...)
			next[i] = j
			row = append(row, b.button(label, rec.ID, "s"+next.encode()))
			if len(row) == 3 {
				rows, row = append(rows, row), nil
			}
		}
		if len(row) > 0 {
			rows = append(rows, row)
		}
	}
	picks := answer.encode()
	rows = append(rows, []Button{b.button("Approve", rec.ID, "a"+picks), b.button("Reject", rec.ID, "reject")})
	if reusable {
		var row []Button
		if rec.ConversationID != "" {
			row = append(row, b.button("Approve & remember here", rec.ID, "c"+picks))
		}
		rows = append(rows, append(row, b.button("Approve & remember always", rec.ID, "l"+picks)))
	}
	return &Markup{InlineKeyboard: rows}
}

// reusable reports whether tool allows "remember"; without the registry's answer it does not.
func (b *Bot) reusable(tool string) bool { return b.d.Reusable != nil && b.d.Reusable(tool) }

// sendCard sends the card of the pending action id to chat with its buttons. A card whose
// choices do not fit on buttons says where to decide it and offers Reject only.
func (b *Bot) sendCard(ctx context.Context, chat int64, id, summary, preview string) error {
	rec, err := action.Get(ctx, b.d.Store.Pool, id)
	if err != nil { // the card still goes, with the buttons of a card without choices
		b.d.Log.Warn("read a card's action", "action", id, "err", err)
		_, serr := b.d.API.SendMessage(ctx, chat, clip(cardText(summary, preview, nil)), &Markup{InlineKeyboard: [][]Button{{
			b.button("Approve", id, "approve"), b.button("Reject", id, "reject")}}})
		return errors.Join(err, serr)
	}
	choices := rec.Envelope.Choices
	text := cardText(summary, preview, choices)
	var markup *Markup
	if fits(choices) {
		markup = b.cardMarkup(rec, initialAnswer(choices), b.reusable(rec.Tool) && rec.DelegationDepth == 0)
	} else {
		text += "\n\n" + errTooManyChoices.Error()
		markup = &Markup{InlineKeyboard: [][]Button{{b.button("Reject", rec.ID, "reject")}}}
	}
	_, err = b.d.API.SendMessage(ctx, chat, clip(text), markup)
	return err
}

// SendCard sends the card of the pending action id to chat, with the buttons a card in a
// conversation has: how an approval raised by unattended work reaches the owner's phone.
func (b *Bot) SendCard(ctx context.Context, chat int64, id, summary, preview string) error {
	return b.sendCard(ctx, chat, id, summary, preview)
}

// fits reports whether choices can be carried on buttons.
func fits(choices []plugins.Choice) bool {
	if len(choices) > maxChoices {
		return false
	}
	for _, c := range choices {
		if len(c.Options) > maxOptions || len(c.Options) == 0 {
			return false
		}
	}
	return true
}

// cardVerb is a tapped card button's meaning.
type cardVerb struct {
	decide   bool            // the tap decides (else it only picks)
	approve  bool            // it approves (else it rejects)
	remember action.Remember // the standing permission asked for with the approval
	answer   string          // the picks carried, encoded; "" for the verbs without them
	legacy   bool            // "approve" or "reject": the defaults, nothing remembered
}

// parseVerb reads a card button's verb; false for one that is no card's.
func parseVerb(v string) (cardVerb, bool) {
	switch v {
	case "approve":
		return cardVerb{decide: true, approve: true, legacy: true}, true
	case "reject":
		return cardVerb{decide: true, legacy: true}, true
	}
	if v == "" || len(v) > 1+maxChoices {
		return cardVerb{}, false
	}
	rest := v[1:]
	switch v[0] {
	case 's':
		return cardVerb{answer: rest}, true
	case 'a':
		return cardVerb{decide: true, approve: true, answer: rest}, true
	case 'c':
		return cardVerb{decide: true, approve: true, remember: action.RememberConversation, answer: rest}, true
	case 'l':
		return cardVerb{decide: true, approve: true, remember: action.RememberAll, answer: rest}, true
	}
	return cardVerb{}, false
}
