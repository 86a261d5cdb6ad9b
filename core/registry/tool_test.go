package registry

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"buddi/plugins"
)

// testSchema is the argument schema of the test tools: a required path, an optional positive
// integer, and a nested object with its own rules.
const testSchema = `{
	"type": "object",
	"properties": {
		"path":  {"type": "string", "minLength": 1},
		"lines": {"type": "integer", "minimum": 1},
		"opts": {
			"type": "object",
			"properties": {
				"depth": {"type": "integer", "maximum": 5},
				"mode":  {"enum": ["fast", "slow"]}
			},
			"required": ["mode"],
			"additionalProperties": false
		}
	},
	"required": ["path"],
	"additionalProperties": false
}`

// testTool is a plugins.Tool whose behaviour each test sets.
type testTool struct {
	spec     plugins.Spec
	describe func(ctx context.Context, call plugins.Call) (plugins.Envelope, error)
	execute  func(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error)
}

var _ plugins.Tool = (*testTool)(nil)

func (t *testTool) Spec() plugins.Spec { return t.spec }

func (t *testTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	if t.describe != nil {
		return t.describe(ctx, call)
	}
	return plugins.Envelope{Summary: "test " + call.Tool, Effects: t.spec.Effects, Preview: "test"}, nil
}

func (t *testTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	if t.execute != nil {
		return t.execute(ctx, call, approved)
	}
	return plugins.Result{Text: "ok"}, nil
}

// narrowTool is a testTool that also picks its tier per call.
type narrowTool struct {
	*testTool
	tierFor func(ctx context.Context, call plugins.Call) plugins.Tier
}

var _ plugins.TierNarrower = (*narrowTool)(nil)

func (t *narrowTool) TierFor(ctx context.Context, call plugins.Call) plugins.Tier {
	return t.tierFor(ctx, call)
}

// newTool returns a test tool named name with the test schema, effect read and tier.
func newTool(name string, tier plugins.Tier) *testTool {
	return &testTool{spec: plugins.Spec{
		Name:        name,
		Description: "a test tool",
		Schema:      json.RawMessage(testSchema),
		Effects:     []plugins.Effect{plugins.EffectRead},
		Tier:        tier,
	}}
}

// narrowing wraps tool so that TierFor answers tier.
func narrowing(tool *testTool, tier plugins.Tier) *narrowTool {
	return &narrowTool{testTool: tool, tierFor: func(context.Context, plugins.Call) plugins.Tier { return tier }}
}

// manifest is a plugin "test" at version 1.2.3 holding tools.
func manifest(tools ...plugins.Tool) plugins.Manifest {
	return plugins.Manifest{Name: "test", Version: "1.2.3", Tools: tools}
}

// mustNew builds a registry or fails the test.
func mustNew(t *testing.T, manifests ...plugins.Manifest) *Registry {
	t.Helper()
	r, err := New(manifests...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// testNow is the clock of every Resolve in these tests.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sessionCall is a call that meets every session check at testNow.
func sessionCall(tool, args string) plugins.Call {
	return plugins.Call{
		Tool:            tool,
		Args:            json.RawMessage(args),
		Agent:           "dev",
		ConversationID:  "c1",
		RunID:           "r1",
		DelegationDepth: 0,
		Owner:           &plugins.OwnerRequest{Surface: "dashboard", ExpiresAt: testNow.Add(time.Minute)},
		Granted:         true,
	}
}

// plainCall is a call with no owner request behind it (a scheduled run, say).
func plainCall(tool, args string) plugins.Call {
	return plugins.Call{Tool: tool, Args: json.RawMessage(args), Agent: "dev", ConversationID: "c1", RunID: "r1", Granted: true}
}

// blocker is a tool body that blocks, ignoring its ctx, until the test ends. started is
// closed when it begins.
type blocker struct {
	started chan struct{}
	release chan struct{}
}

// newBlocker returns a blocker released in t's cleanup.
func newBlocker(t *testing.T) *blocker {
	b := &blocker{started: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(b.release) })
	return b
}

// wait signals that the tool started and blocks until the test ends.
func (b *blocker) wait() {
	close(b.started)
	<-b.release
}
