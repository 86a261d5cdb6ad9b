package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/conversation"
	"buddi/plugins"
)

// QuestionTTL is how long a held question claims the owner's next message.
const QuestionTTL = 15 * time.Minute

// Manifest is the conversation tools the runtime owns: conversation.ask, which holds a
// question for the owner. It is auto (it sends nothing and authorizes nothing) and waits for
// the owner: once it succeeds, every later call of the run is blocked.
func Manifest(pool *pgxpool.Pool) plugins.Manifest {
	return plugins.Manifest{
		Name: "conversation", Version: "1", Description: "Asking the owner a question and waiting for the answer.",
		Tools: []plugins.Tool{askTool{pool: pool}, offerTool{pool: pool}},
	}
}

type askTool struct{ pool *pgxpool.Pool }

func (askTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: "conversation.ask",
		Description: "Ask the owner a question you need answered before you go on. Nothing else runs in this turn " +
			"after it: finish your message with the question, and the owner's next message is the answer.",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["question"],
			"properties":{"question":{"type":"string","minLength":1,"maxLength":2000,"description":"The question, as the owner will read it."}}}`),
		Effects:       []plugins.Effect{plugins.EffectStateWrite}, // core.questions
		Tier:          plugins.TierAuto,
		Timeout:       10 * time.Second,
		WaitsForOwner: true,
	}
}

func (askTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a struct{ Question string }
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Ask the owner: " + a.Question}, nil
}

func (t askTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a struct{ Question string }
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, err
	}
	if call.ConversationID == "" || call.RunID == "" {
		return plugins.Result{}, errors.New("a question needs a conversation to be asked in")
	}
	if err := conversation.Ask(ctx, t.pool, call.ConversationID, call.Agent, call.RunID, strings.TrimSpace(a.Question), QuestionTTL); err != nil {
		return plugins.Result{}, fmt.Errorf("hold the question: %w", err)
	}
	return plugins.Result{Text: "The question is with the owner; their next message is the answer. Finish your message with the question, without calling tools."}, nil
}

// offerTool is conversation.offer: a few next moves the owner can take with one tap, each a
// prompt this agent is run with. A shortcut for typing a sentence, not a capability: every
// tier, approval and preview applies when it runs.
type offerTool struct{ pool *pgxpool.Pool }

func (offerTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name:        "conversation.offer",
		Description: "End your message with up to four next moves the owner can take with one tap; each runs you with the prompt you write for it.",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["offers"],"properties":{"offers":{"type":"array","minItems":1,"maxItems":4,
			"items":{"type":"object","additionalProperties":false,"required":["label","prompt"],"properties":{
				"label":{"type":"string","minLength":1,"maxLength":40,"description":"The button's words."},
				"prompt":{"type":"string","minLength":1,"maxLength":2000,"description":"What you will be asked when it is taken."}}}}}}`),
		Effects: []plugins.Effect{plugins.EffectStateWrite},
		Tier:    plugins.TierAuto,
		Timeout: 10 * time.Second,
	}
}

func (offerTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: "Offer next moves " + string(call.Args)}, nil
}

func (t offerTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a struct {
		Offers []struct{ Label, Prompt string } `json:"offers"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, err
	}
	if call.ConversationID == "" {
		return plugins.Result{}, errors.New("offers need a conversation")
	}
	var labels, prompts []string
	for _, o := range a.Offers {
		labels, prompts = append(labels, strings.TrimSpace(o.Label)), append(prompts, strings.TrimSpace(o.Prompt))
	}
	offers, err := conversation.AddOffers(ctx, t.pool, call.ConversationID, call.Agent, call.RunID, labels, prompts)
	if err != nil {
		return plugins.Result{}, err
	}
	data, _ := json.Marshal(map[string]any{"renderer": "offers", "offers": offers})
	return plugins.Result{Text: "Offered: " + strings.Join(labels, "; ") + ". The owner sees them as buttons.", Data: data}, nil
}
