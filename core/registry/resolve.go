package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"buddi/plugins"
)

// Resolution is a call that passed the gate: what the registry knows about it and the tier it
// is to be treated at.
type Resolution struct {
	// Tool is the registered tool.
	Tool plugins.Tool
	// Spec is the tool's declaration as the registry holds it (a copy).
	Spec plugins.Spec
	// Version is the version of the tool's plugin, part of the action's hash.
	Version string
	// Narrowed is what the tool's TierFor answered, or "" when the tool does not narrow.
	Narrowed plugins.Tier
	// Tier is the effective tier: auto executes, gated becomes an action and an approval,
	// session executes (its checks have passed). Never draft.
	Tier plugins.Tier
	// SessionChecked reports that the session checks ran and passed: the declared or the
	// effective tier is session.
	SessionChecked bool
	// Args are the validated arguments, decoded: map[string]any, []any, string, bool, nil
	// and json.Number (numbers keep their exact text).
	Args map[string]any
	// Reason says in one sentence how the tier was decided, for the event log.
	Reason string
}

// Resolve is the trust gate. It decides whether call may proceed and at which tier, failing
// closed, in this order: an unknown tool ([CodeUnknownTool]); arguments that are not one
// JSON object or fail the schema ([CodeInvalidArguments], naming the field); a draft tool
// ([CodeTierNotExecutable]); the tool's TierFor, when it has one, with the declared tier as
// the floor ([CodeTierForFailed] for a panic, [CodeTierNotExecutable] for an answer that is
// not auto, gated or session); and, when the declared or effective tier is session, the
// session checks at now ([CodeSessionNotAuthorized]). Every error it returns is a *[Refusal].
//
// TierFor runs under the tool's timeout, with a copy of the arguments.
func (r *Registry) Resolve(ctx context.Context, call plugins.Call, now time.Time) (Resolution, error) {
	e, ok := r.entries[call.Tool]
	if !ok {
		return Resolution{}, refuse(CodeUnknownTool, call.Tool, nil, "there is no tool named %s", quoteName(call.Tool))
	}
	args, aerr := checkArgs(e.schema, call.Args)
	if aerr != nil {
		return Resolution{}, refuse(CodeInvalidArguments, call.Tool, nil, "%s", aerr.msg)
	}
	declared := e.spec.Tier
	if declared == plugins.TierDraft {
		return Resolution{}, refuse(CodeTierNotExecutable, call.Tool, nil, "%s is a draft and cannot be called yet", call.Tool)
	}
	res := Resolution{Tool: e.tool, Spec: cloneSpec(e.spec), Version: e.version, Tier: declared, Args: args}
	why := []string{fmt.Sprintf("declared %s", declared)}

	if n, ok := e.tool.(plugins.TierNarrower); ok {
		narrowCall := call
		narrowCall.Args = slices.Clone(call.Args)
		g := guard(ctx, e.timeout(), func(ctx context.Context) (plugins.Tier, error) {
			return n.TierFor(ctx, narrowCall), nil
		})
		switch {
		case g.panicked:
			return Resolution{}, refuse(CodeTierForFailed, call.Tool, fmt.Errorf("registry: %s TierFor: %w", call.Tool, g.cause()),
				"%s could not decide the call's tier: it crashed", call.Tool)
		case g.abandoned:
			return Resolution{}, refuse(CodeTierForFailed, call.Tool, fmt.Errorf("registry: %s TierFor: %w", call.Tool, g.cause()),
				"%s could not decide the call's tier in time", call.Tool)
		}
		effective, ok := EffectiveTier(declared, g.val)
		if !ok {
			return Resolution{}, refuse(CodeTierNotExecutable, call.Tool, nil,
				"%s chose the tier %q for this call, which is not auto, gated or session", call.Tool, string(g.val))
		}
		res.Narrowed, res.Tier = g.val, effective
		if effective == g.val {
			why = append(why, fmt.Sprintf("TierFor chose %s", g.val))
		} else {
			why = append(why, fmt.Sprintf("TierFor chose %s, kept %s because the declared tier is the floor", g.val, effective))
		}
	}

	if declared == plugins.TierSession || res.Tier == plugins.TierSession {
		if failed := sessionFailures(call, now); len(failed) > 0 {
			return Resolution{}, refuse(CodeSessionNotAuthorized, call.Tool, nil,
				"%s runs only inside a live owner request, for a tool in the agent's grant, in a conversation, in a run that is not delegated; this call is refused because %s",
				call.Tool, strings.Join(failed, "; "))
		}
		res.SessionChecked = true
		why = append(why, "session checks passed")
	}
	res.Reason = strings.Join(why, "; ")
	return res, nil
}

// EffectiveTier gives the tier a call is treated at, from the tool's declared tier and what
// its TierFor answered; ok is false when the answer is not auto, gated or session, or the
// declared tier is not one of those either (draft is never executable).
//
// TierFor may only narrow: a declared-auto tool may become gated or session; a declared-gated
// tool may become session but never auto (an auto answer keeps gated). A declared-session
// tool takes TierFor's answer (auto, gated or session) because its session checks run on
// every call whatever the answer: for it the declared tier is the floor of who may call, and
// the answer only says how the authorised call proceeds (seed 000, §3).
func EffectiveTier(declared, narrowed plugins.Tier) (effective plugins.Tier, ok bool) {
	switch narrowed {
	case plugins.TierAuto, plugins.TierGated, plugins.TierSession:
	default:
		return "", false
	}
	switch declared {
	case plugins.TierAuto, plugins.TierSession:
		return narrowed, true
	case plugins.TierGated:
		if narrowed == plugins.TierAuto {
			return plugins.TierGated, true
		}
		return narrowed, true
	}
	return "", false
}
