package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/notify"
	"buddi/plugins"
)

// Manifest is the tools a mission's run decides with (seed 004, "Sentinels": silence is the
// default): mission.report delivers what the run found, mission.silent says there was nothing
// worth the owner's attention. Both are auto: they act only on the run's own occurrence.
func Manifest(pool *pgxpool.Pool) plugins.Manifest {
	return ManifestMuting(pool, nil)
}

// ManifestMuting is Manifest with a check made again before a report is delivered: muted
// reports whether the run carried only findings the owner has muted since (a sentinel's
// wake); such a report is not delivered (silent, reason muted).
func ManifestMuting(pool *pgxpool.Pool, muted func(ctx context.Context, runID string) (bool, error)) plugins.Manifest {
	return ManifestTelling(pool, muted, nil)
}

// Tell is notifyOwner as the mission tools call it: a delivered report, and the "Still
// useful?" question, reach the owner through it.
type Tell func(ctx context.Context, n notify.Notice)

// ManifestTelling is ManifestMuting whose delivered reports and "Still useful?" questions
// are told to the owner through tell (nil tells no one: the events only).
func ManifestTelling(pool *pgxpool.Pool, muted func(ctx context.Context, runID string) (bool, error), tell Tell) plugins.Manifest {
	return plugins.Manifest{Name: "mission", Version: "1", Description: "How a mission's run reports, or stays silent.",
		Tools: []plugins.Tool{decideTool{pool: pool, report: true, muted: muted, tell: tell}, decideTool{pool: pool, muted: muted, tell: tell}}}
}

type decideTool struct {
	pool   *pgxpool.Pool
	report bool
	muted  func(ctx context.Context, runID string) (bool, error)
	tell   Tell
}

// told tells the owner n, when there is anyone to tell.
func (t decideTool) told(ctx context.Context, n notify.Notice) {
	if t.tell != nil {
		t.tell(ctx, n)
	}
}

func (t decideTool) Spec() plugins.Spec {
	if t.report {
		return plugins.Spec{Name: "mission.report", Description: "Deliver this mission run's findings to the owner: what matters, in a few sentences.",
			Schema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["report"],"properties":{"report":{"type":"string","minLength":1,"maxLength":4000}}}`),
			Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierAuto, Timeout: 10 * time.Second}
	}
	return plugins.Spec{Name: "mission.silent", Description: "End this mission run without telling the owner anything: nothing needs them.",
		Schema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"reason":{"type":"string","maxLength":400}}}`),
		Effects: []plugins.Effect{plugins.EffectStateWrite}, Tier: plugins.TierAuto, Timeout: 10 * time.Second}
}

func (t decideTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	return plugins.Envelope{Summary: t.Spec().Name + " " + string(call.Args)}, nil
}

func (t decideTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a struct{ Report, Reason string }
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, err
	}
	state, reason, text := "silent", strings.TrimSpace(a.Reason), ""
	if t.report {
		state, reason, text = "delivered", "reported", strings.TrimSpace(a.Report)
		if t.muted != nil {
			muted, err := t.muted(ctx, call.RunID)
			if err != nil {
				return plugins.Result{}, err
			}
			if muted {
				if _, _, err := settle(ctx, t.pool, call.RunID, "silent", "muted", ""); err != nil {
					return plugins.Result{}, err
				}
				_, err := eventlog.Append(ctx, t.pool, events.MissionSilent, call.ConversationID, events.MissionSilentPayload{RunID: call.RunID, Reason: "muted"})
				return plugins.Result{Text: "Not delivered: the owner has muted what this was about. Nothing is sent."}, err
			}
		}
	}
	if reason == "" {
		reason = "nothing needed the owner"
	}
	ok, still, err := settle(ctx, t.pool, call.RunID, state, reason, text)
	if err != nil {
		return plugins.Result{}, err
	}
	if still != nil {
		t.told(ctx, notify.Notice{Key: fmt.Sprintf("mission.still_useful:%d:%s", still.MissionID, call.RunID), Kind: string(events.MissionStillUseful),
			Title: "Still useful?", Body: still.OwnerLine, Link: "#/missions"})
	}
	if !ok {
		var settled bool
		if err := t.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM core.occurrences WHERE run_id = $1 AND run_id <> '')`, call.RunID).Scan(&settled); err != nil {
			return plugins.Result{}, err
		}
		if settled {
			return plugins.Result{Text: "This run already reported or stayed silent; nothing more is sent.", IsError: true}, nil
		}
	}
	if !ok && t.report {
		// Not a mission's occurrence (a reminder's run, a sentinel's wake): the report is
		// delivered all the same.
		if _, err := eventlog.Append(ctx, t.pool, events.MissionReported, call.ConversationID, events.MissionReportedPayload{RunID: call.RunID, Report: text}); err != nil {
			return plugins.Result{}, err
		}
	}
	if t.report {
		t.told(ctx, notify.Notice{Key: "mission.report:" + call.RunID, Kind: string(events.MissionReported),
			Title: "A report from " + call.Agent, Body: text, ConversationID: call.ConversationID})
		return plugins.Result{Text: "Delivered to the owner."}, nil
	}
	return plugins.Result{Text: "Noted: nothing is sent."}, nil
}

// StillUsefulAfter is how many silent runs in a row raise the one "Still useful?" question.
const StillUsefulAfter = 48

// settle ends the running occurrence of run as state, with an event; false when the run has
// none running.
// still is the "Still useful?" question the settling raised, nil when none.
func settle(ctx context.Context, pool *pgxpool.Pool, runID, state, reason, report string) (ok bool, still *events.MissionStillUsefulPayload, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ok, still = false, nil
		var occ, mission int64
		err := tx.QueryRow(ctx, `UPDATE core.occurrences SET state = $2, reason = $3, updated_at = now()
			WHERE run_id = $1 AND run_id <> '' AND state = 'running' RETURNING id, mission_id`, runID, state, reason).Scan(&occ, &mission)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("settle the occurrence of run %s: %w", runID, err)
		}
		ok = true
		// Silence counts toward "Still useful?"; a delivered report starts the count again.
		var quiet int
		if err := tx.QueryRow(ctx, `UPDATE core.missions SET quiet_runs = CASE WHEN $2 THEN 0 ELSE quiet_runs + 1 END
			WHERE id = $1 RETURNING quiet_runs`, mission, state == "delivered").Scan(&quiet); err != nil {
			return err
		}
		if quiet == StillUsefulAfter {
			still = &events.MissionStillUsefulPayload{MissionID: mission, QuietRuns: quiet,
				OwnerLine: fmt.Sprintf("Still useful? Mission %d has had nothing to say %d times in a row: keep or stop it (buddi missions disable %d).", mission, quiet, mission)}
			if _, err := eventlog.Append(ctx, tx, events.MissionStillUseful, "", *still); err != nil {
				return err
			}
		}
		if state == "delivered" { // a delivered recap consumes the digest it was given
			if _, err := tx.Exec(ctx, `UPDATE core.digest_items SET consumed_at = now()
				WHERE consumed_at IS NULL AND id <= (SELECT digest_upto FROM core.occurrences WHERE id = $1)`, occ); err != nil {
				return err
			}
		}
		if state == "delivered" {
			_, err = eventlog.Append(ctx, tx, events.MissionReported, "", events.MissionReportedPayload{
				MissionID: mission, OccurrenceID: occ, RunID: runID, Reason: reason, Report: report})
			return err
		}
		_, err = eventlog.Append(ctx, tx, events.MissionSilent, "", events.MissionSilentPayload{
			MissionID: mission, OccurrenceID: occ, RunID: runID, Reason: reason})
		return err
	})
	return ok, still, err
}

// Finished settles a mission run of agent that ended without deciding: silent with reason
// no-decision (and a warning in the log), or, when the owner opted in to every answer,
// delivered with its last words (told to the owner through tell, as a "Still useful?" is). It returns the state it set ("" when there was nothing to
// settle).
func Finished(ctx context.Context, pool *pgxpool.Pool, runID, agent, lastText string, tell Tell) (string, error) {
	var always bool
	err := pool.QueryRow(ctx, `SELECT m.always_deliver FROM core.occurrences o JOIN core.missions m ON m.id = o.mission_id
		WHERE o.run_id = $1 AND o.run_id <> '' AND o.state = 'running'`, runID).Scan(&always)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	state, reason := "silent", "no-decision"
	if always {
		state, reason = "delivered", "always delivered"
	}
	ok, still, err := settle(ctx, pool, runID, state, reason, lastText)
	if err != nil {
		return "", err
	}
	t := decideTool{tell: tell}
	if still != nil {
		t.told(ctx, notify.Notice{Key: fmt.Sprintf("mission.still_useful:%d:%s", still.MissionID, runID), Kind: string(events.MissionStillUseful),
			Title: "Still useful?", Body: still.OwnerLine, Link: "#/missions"})
	}
	if ok && state == "delivered" {
		t.told(ctx, notify.Notice{Key: "mission.report:" + runID, Kind: string(events.MissionReported), Title: "A report from " + agent, Body: lastText})
	}
	return state, nil
}
