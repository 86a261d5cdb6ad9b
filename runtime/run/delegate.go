package run

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"buddi/core/conversation"
	"buddi/core/eventlog"
)

// Delegation is who asked for a colleague's run through agent.delegate (seed 004,
// "Delegation"): it is pinned in the run's run.started event (Meta's DelegatedBy, Depth,
// Chain, AskedIn, AskedRun), and every call of the run carries its depth.
type Delegation struct {
	By       string   `json:"by"`        // the asking agent's id
	Depth    int      `json:"depth"`     // the new run's depth: the asker's plus one
	Chain    []string `json:"chain"`     // every agent that asked on the way down, first asker first
	AskedIn  string   `json:"asked_in"`  // the asking run's conversation
	AskedRun string   `json:"asked_run"` // the asking run
	Origin   string   `json:"origin"`    // the surface the first request came from (the asking call's Surface)
}

// pin copies the delegation into the run's Meta (nothing for a run nobody delegated).
func (d *Delegation) pin(m *Meta) {
	if d == nil {
		return
	}
	m.DelegatedBy, m.Depth, m.Chain, m.AskedIn, m.AskedRun, m.Origin = d.By, d.Depth, slices.Clone(d.Chain), d.AskedIn, d.AskedRun, d.Origin
}

// StartDelegated enqueues a colleague's run asked through agent.delegate: it answers the
// question written as its conversation's first turn, and is marked delegated by d. It is
// interactive (the asking run waits on it: the short retry horizon) and has no surface: no
// owner is in it, so no owner request, standing permission or session tier ever reaches it.
func (r *Runner) StartDelegated(d Delegation) conversation.StartRun {
	return func(ctx context.Context, tx pgx.Tx, conv conversation.Conversation, runID string) error {
		return Enqueue(ctx, tx, r.Insert, StartArgs{RunID: runID, ConversationID: conv.ID, Agent: conv.Agent, Interactive: true, Delegation: &d})
	}
}

// ReadMeta reads what run runID pinned when it started, from its run.started event; found is
// false for a run that has not started.
func ReadMeta(ctx context.Context, q eventlog.Querier, runID string) (m Meta, found bool, err error) {
	return (&Runner{}).readMetaIn(ctx, q, runID)
}

// LastText is run m's last model text: the answer a finished run gave.
func (r *Runner) LastText(ctx context.Context, m Meta) string { return r.lastText(ctx, m) }
