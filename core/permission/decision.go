package permission

import (
	"fmt"

	"buddi/plugins"
)

// Verdict is the answer for one call.
type Verdict int

// The three verdicts, from the least strict. The zero Verdict is none of them and is
// treated as a refusal.
const (
	// VerdictAllow lets the call run.
	VerdictAllow Verdict = iota + 1
	// VerdictPrompt is a block that a human may lift: the call waits for approval.
	VerdictPrompt
	// VerdictBlock refuses the call.
	VerdictBlock
)

// String returns allow, prompt or block.
func (v Verdict) String() string {
	switch v {
	case VerdictAllow:
		return "allow"
	case VerdictPrompt:
		return "prompt"
	case VerdictBlock:
		return "block"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// strictness orders verdicts for comparisons: allow 0, prompt 1, block 2, and anything
// else as block.
func (v Verdict) strictness() int {
	switch v {
	case VerdictAllow:
		return 0
	case VerdictPrompt:
		return 1
	}
	return 2
}

// BlockKind says which rule stopped a call. Two kinds are liftable by a human; the others
// never are.
type BlockKind int

// The kinds of block.
const (
	// BlockNone: nothing stopped the call; the verdict is allow.
	BlockNone BlockKind = iota
	// BlockDeny: a permissions.deny rule matched the shell command, a deny rule cannot be
	// read, or the command cannot be checked against the deny rules. Never liftable.
	BlockDeny
	// BlockWorkspace: a path the call touches is outside the workspace. Never liftable.
	BlockWorkspace
	// BlockNetwork: the network policy refuses the call. Never liftable.
	BlockNetwork
	// BlockMode: the mode does not allow the call's effects. Never liftable.
	BlockMode
	// BlockCommandNotAllowed: in accept-edits mode, a shell command that is not in
	// permissions.allow. Liftable.
	BlockCommandNotAllowed
	// BlockNotAllowedByDefault: a tool that accept-edits mode does not allow by default
	// (every tool without declared effects, MCP tools among them). Liftable.
	BlockNotAllowedByDefault
)

// String names the kind.
func (k BlockKind) String() string {
	switch k {
	case BlockNone:
		return "none"
	case BlockDeny:
		return "deny"
	case BlockWorkspace:
		return "workspace"
	case BlockNetwork:
		return "network"
	case BlockMode:
		return "mode"
	case BlockCommandNotAllowed:
		return "command-not-allowed"
	case BlockNotAllowedByDefault:
		return "not-allowed-by-default"
	}
	return fmt.Sprintf("BlockKind(%d)", int(k))
}

// Liftable reports whether a human may lift a block of this kind by approving the call.
func (k BlockKind) Liftable() bool {
	return k == BlockCommandNotAllowed || k == BlockNotAllowedByDefault
}

// Decision is the engine's answer for one call.
type Decision struct {
	// Verdict is allow, prompt or block.
	Verdict Verdict
	// Block is the rule that stopped the call; BlockNone when it is allowed.
	Block BlockKind
	// Reason is one plain sentence for the owner saying which rule decided.
	Reason string
	// Risk, for a liftable block, says in a few words what the call would do, for the
	// approval card. Empty otherwise.
	Risk string
}

// Liftable reports whether a human may lift this decision's block.
func (d Decision) Liftable() bool {
	return d.Verdict != VerdictAllow && d.Block.Liftable()
}

// String renders the decision for logs.
func (d Decision) String() string {
	if d.Block == BlockNone {
		return fmt.Sprintf("%v: %s", d.Verdict, d.Reason)
	}
	return fmt.Sprintf("%v (%v): %s", d.Verdict, d.Block, d.Reason)
}

// Tier is how the registry treats a call (the plugin contract's type).
type Tier = plugins.Tier

// The tiers of seed 004's trust model.
const (
	TierAuto    = plugins.TierAuto
	TierGated   = plugins.TierGated
	TierSession = plugins.TierSession
	TierDraft   = plugins.TierDraft
)

// Tier maps the decision onto the registry's tiers: allow is TierAuto, prompt is
// TierGated, and a block is refused (ok is false; Reason says why). A zero Decision is
// refused.
func (d Decision) Tier() (t Tier, ok bool) {
	switch d.Verdict {
	case VerdictAllow:
		return TierAuto, true
	case VerdictPrompt:
		return TierGated, true
	}
	return "", false
}

// allowed is an allow decision with its reason.
func allowed(reason string) Decision {
	return Decision{Verdict: VerdictAllow, Block: BlockNone, Reason: reason}
}

// blocked is a block that is never liftable.
func blocked(kind BlockKind, reason string) Decision {
	return Decision{Verdict: VerdictBlock, Block: kind, Reason: reason}
}

// prompted is a block that a human may lift.
func prompted(kind BlockKind, reason, risk string) Decision {
	return Decision{Verdict: VerdictPrompt, Block: kind, Reason: reason, Risk: risk}
}
