// Package canvas is the agent's explicit say over the owner's canvas: canvas.show draws data
// with a renderer the agent names, or draws an earlier result of the conversation again with
// another renderer. It is the highest of seed 004's precedence (core/views.Resolve): above
// the plugin's descriptor and above inference. It is auto: it changes nothing and sends
// nothing, and what it draws is scrubbed like every other result.
package canvas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/views"
	"buddi/plugins"
)

// Name is the plugin's name.
const Name = "canvas"

// Manifest is the canvas tools over pool (the transcript an earlier result is read from).
func Manifest(pool *pgxpool.Pool) plugins.Manifest {
	return plugins.Manifest{
		Name: Name, Version: "1",
		Description: "Drawing on the owner's canvas: data, or an earlier result, with a renderer the agent names.",
		Tools:       []plugins.Tool{showTool{pool: pool}},
	}
}

type showTool struct{ pool *pgxpool.Pool }

// args are canvas.show's arguments.
type args struct {
	Renderer string            `json:"renderer"`
	Title    string            `json:"title"`
	Data     json.RawMessage   `json:"data"`
	CallID   string            `json:"call_id"`
	Paths    map[string]string `json:"paths"`
	Columns  []string          `json:"columns"`
}

func (showTool) Spec() plugins.Spec {
	names, _ := json.Marshal(views.Names())
	return plugins.Spec{
		Name: views.ShowTool,
		Description: "Draw something on the owner's canvas, beside the chat, when they are on the dashboard: either data you give " +
			"(data) or the result of an earlier tool call of this conversation (call_id), with the renderer you choose. " +
			"A table takes an array of objects, its columns the paths in columns, in that order (without columns, every key, in no order you choose); keyvalue an object; bars and timeseries " +
			"an array of objects with paths label/value or x/y; document, diff and terminal a string. Numbers are printed as you write them.",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["renderer","title"],
			"properties":{
			"renderer":{"enum":` + string(names) + `,"description":"How to draw it."},
			"title":{"type":"string","minLength":1,"maxLength":120,"description":"The tab's name."},
			"data":{"description":"What to draw, as JSON. Give this or call_id."},
			"call_id":{"type":"string","maxLength":200,"description":"The id of an earlier tool call in this conversation whose result to draw. Give this or data."},
			"paths":{"type":"object","additionalProperties":{"type":"string","maxLength":200},"description":"Where the renderer's data is in it, by slot (rows, record, text, items, label, value, points, x, y, url, title): dotted keys and [n] indexes, not expressions."},
			"columns":{"type":"array","maxItems":12,"items":{"type":"string","maxLength":200},"description":"A table's columns: paths within a row."}}}`),
		Effects: []plugins.Effect{plugins.EffectRead},
		Tier:    plugins.TierAuto,
		Timeout: 10 * time.Second,
	}
}

func (showTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Envelope{}, err
	}
	if (len(a.Data) == 0) == (a.CallID == "") {
		return plugins.Envelope{}, errors.New("give either data or call_id, not both and not neither")
	}
	for slot, p := range a.Paths {
		if err := views.Check(Name, []string{views.ShowTool}, plugins.ViewDescriptor{Tool: views.ShowTool, Renderer: a.Renderer, Paths: map[string]string{slot: p}}); err != nil {
			return plugins.Envelope{}, fmt.Errorf("paths: %w", err)
		}
	}
	return plugins.Envelope{Summary: "Show " + a.Title + " on the canvas as " + a.Renderer, Effects: []plugins.Effect{plugins.EffectRead}}, nil
}

func (t showTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, err
	}
	s := views.Shown{Renderer: a.Renderer, Title: strings.TrimSpace(a.Title), Paths: a.Paths, Data: a.Data}
	if a.CallID != "" {
		data, err := t.earlier(ctx, call.ConversationID, a.CallID)
		if err != nil {
			return plugins.Result{}, err
		}
		if data == nil {
			return plugins.Result{Text: fmt.Sprintf("No tool call %q has a result in this conversation; name one of its calls, or give data.", a.CallID), IsError: true}, nil
		}
		s.Data, s.Of = data, a.CallID
	}
	if r, _ := views.Canonical(a.Renderer); r == views.Table && len(a.Columns) == 0 {
		// The columns in the order the data gives them, kept as a list: the transcript
		// stores objects without their key order.
		a.Columns = views.Columns(s.Data, a.Paths["rows"])
	}
	if len(a.Columns) > 0 {
		s.Options = map[string]any{"columns": a.Columns}
	}
	out, err := json.Marshal(map[string]any{"canvas": s})
	if err != nil {
		return plugins.Result{}, err
	}
	v := views.Resolve(views.Input{Result: views.Result{Tool: views.ShowTool, Data: out}})
	if v == nil {
		return plugins.Result{Text: fmt.Sprintf("Nothing to draw: a %s needs %s. Nothing was shown.", a.Renderer, needs(a.Renderer)), IsError: true}, nil
	}
	if v.Renderer == views.Table && views.BlankRows(v.Rows) {
		return plugins.Result{Text: fmt.Sprintf("Nothing to draw: none of the columns %q has a value in the rows; name paths within a row. Nothing was shown.", v.Columns), IsError: true}, nil
	}
	text := fmt.Sprintf("Shown on the canvas as %s: %q.", v.Renderer, s.Title)
	switch call.Surface {
	case "telegram", "terminal":
		text += " The owner is on " + call.Surface + ", which has no canvas: they read it as text there, and on the dashboard's canvas later."
	}
	return plugins.Result{Text: text, Data: out}, nil
}

// earlier returns the structured output of the answer to callID in conv (its text when it
// has none, as a JSON string), or nil when there is no such answer.
func (t showTool) earlier(ctx context.Context, conv, callID string) (json.RawMessage, error) {
	if t.pool == nil || conv == "" {
		return nil, errors.New("canvas.show of an earlier call needs a conversation")
	}
	var data json.RawMessage
	var content string
	err := t.pool.QueryRow(ctx, `SELECT COALESCE(body->'data', 'null'::jsonb), COALESCE(body->>'content', '') FROM core.messages
		WHERE conversation_id = $1 AND kind = 'tool' AND body->>'call_id' = $2 ORDER BY id DESC LIMIT 1`, conv, callID).Scan(&data, &content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the result of %s: %w", callID, err)
	}
	if string(data) != "null" && len(data) > 0 {
		return data, nil
	}
	return json.Marshal(content)
}

// needs says what a renderer draws from.
func needs(renderer string) string {
	r, _ := views.Canonical(renderer)
	switch r {
	case views.Table:
		return "a non-empty array (of objects, or of values)"
	case views.KeyValue:
		return "a non-empty object"
	case views.Bars, views.Timeseries:
		return "an array of objects, each with a label and a number at the paths given"
	case views.Diff:
		return "a unified diff with @@ hunks"
	case views.Document, views.Terminal:
		return "non-empty text"
	case views.Image:
		return "an artifact id"
	case views.Preview:
		return "an http or https url"
	}
	return "a non-empty value"
}
