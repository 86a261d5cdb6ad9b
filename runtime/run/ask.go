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
		Tools: []plugins.Tool{askTool{pool: pool}},
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
