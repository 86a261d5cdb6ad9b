// Package registry is buddi's central tool registry and its trust gate, built in memory from
// the plugins' manifests (no database).
//
// [New] checks every manifest and compiles each tool's JSON Schema once (draft 2020-12, through
// github.com/santhosh-tekuri/jsonschema/v6). Agents cannot read or change what it holds: the
// registry keeps its own copy of each tool's [plugins.Spec], taken once at New.
//
// [Registry.Resolve] is the gate every proposed call passes, in this order, failing closed:
//
//  1. an unknown tool is refused ([CodeUnknownTool]);
//  2. arguments that are not one JSON object, or that fail the tool's schema, are refused
//     with the field named as a JSON pointer ([CodeInvalidArguments]);
//  3. a tool declared draft is refused ([CodeTierNotExecutable]);
//  4. a tool that implements [plugins.TierNarrower] picks the call's tier; the declared tier
//     is the floor (see below). A panic in TierFor is refused ([CodeTierForFailed]); an
//     answer other than auto, gated or session is refused ([CodeTierNotExecutable]);
//  5. when the declared or the effective tier is session, the call must come from a live
//     owner request, for a tool in the agent's grant, from a named agent in a conversation,
//     in a run that is not delegated ([CodeSessionNotAuthorized]).
//
// How the declared tier and TierFor's answer give the effective tier (seed 000, §3):
//
//	declared   TierFor auto   TierFor gated   TierFor session
//	auto       auto           gated           session (+ session checks)
//	gated      gated          gated           session (+ session checks)
//	session    auto    (+ session checks, always, before the answer is acted on)
//	           gated   (+ session checks)
//	           session (+ session checks)
//
// A declared-session tool may narrow to auto or gated because its declared tier is the floor
// in a different sense: its session checks run on every call whatever TierFor answers, so a
// delegate, a scheduled run or a call outside a live owner request is refused before the
// answer means anything. A declared-gated tool never becomes auto.
//
// [Registry.Execute] and [Registry.Run] perform a call under the tool's timeout; a panic, an
// error or a missed deadline is a tool-error, never a success. [Registry.Describe] renders a
// call's effect envelope, refusing the call when the tool errs or panics. None of the three
// decides a tier: they are the mechanism, and Resolve (with the approvals machinery for
// gated calls) is the gate in front of them.
//
// A Registry is immutable after New and safe for concurrent use.
package registry
