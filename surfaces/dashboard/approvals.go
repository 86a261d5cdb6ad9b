package dashboard

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"

	"buddi/core/action"
	"buddi/core/executor"
)

// approvalJSON is an approval as the dashboard shows it: the action, its state, the card
// rendered from the action, and whether the card may offer "remember".
type approvalJSON struct {
	action.Record
	Card string `json:"card"`
	// Reusable says the tool opts into standing permissions, so an approval may remember
	// it for this conversation or all of the agent's (the envelope's choices are in Record);
	// never for a card raised inside a delegation, which a standing permission never covers.
	Reusable bool `json:"reusable"`
}

// view is rec as the dashboard shows it.
func (s *Server) view(rec action.Record) approvalJSON {
	return s.viewWith(s.reusable(), rec)
}

// viewWith is rec as the dashboard shows it, with the reusable tools already looked up.
func (s *Server) viewWith(reusable map[string]bool, rec action.Record) approvalJSON {
	return approvalJSON{Record: rec, Card: rec.PreviewBy(s.handleOf(rec.Agent)), Reusable: reusable[rec.Tool] && rec.DelegationDepth == 0}
}

// handleOf is how the owner knows the agent id: its handle (@buddi), or the id when the
// catalogue does not know it.
func (s *Server) handleOf(id string) string {
	if s.deps.Chat == nil || s.deps.Chat.Catalog == nil {
		return id
	}
	if cat, err := s.deps.Chat.Catalog(); err == nil {
		if a, ok := cat.ByID(id); ok && a.Handle != "" {
			return a.Handle
		}
	}
	return id
}

// reusable names the tools that opt into standing permissions; a tool the registry does not
// know is not among them (Grant would refuse it).
func (s *Server) reusable() map[string]bool {
	out := map[string]bool{}
	if s.deps.Tools == nil {
		return out
	}
	for _, spec := range s.deps.Tools.Tools() {
		if spec.ReusableApproval {
			out[spec.Name] = true
		}
	}
	return out
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	f := action.Filter{Limit: 200, States: []action.State{action.Pending}}
	switch st := r.URL.Query().Get("state"); st {
	case "", "pending":
	case "all":
		f.States = nil
	default:
		if !action.State(st).Valid() {
			writeError(w, http.StatusBadRequest, "state must be all, or one of pending, approved, executing, succeeded, failed, unknown, rejected, expired, refused")
			return
		}
		f.States = []action.State{action.State(st)}
	}
	recs, err := action.List(r.Context(), s.deps.Pool, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	reusable := s.reusable()
	out := make([]approvalJSON, len(recs))
	for i, rec := range recs {
		out[i] = s.viewWith(reusable, rec)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	rec, err := action.Get(r.Context(), s.deps.Pool, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.view(rec))
}

// decisionBody is what POST …/approve and …/reject accept.
type decisionBody struct {
	Picks  map[string]string `json:"picks"`
	Reason string            `json:"reason"`
	// Remember, on approve: "conversation" or "all" grants a standing permission.
	Remember action.Remember `json:"remember"`
}

func (s *Server) decideApproval(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body decisionBody
		raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			writeError(w, http.StatusBadRequest, "the request body could not be read")
			return
		}
		if len(raw) > 0 {
			dec := json.NewDecoder(bytesReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&body); err != nil {
				writeError(w, http.StatusBadRequest, "the body must be JSON like {\"picks\":{…},\"reason\":\"…\"}: "+err.Error())
				return
			}
		}
		rec, err := executor.Decide(r.Context(), s.deps.Pool, s.deps.Queue, s.deps.Tools, s.deps.Seal, action.Decision{
			ActionID: r.PathValue("id"), Approve: approve, Surface: "dashboard", Picks: body.Picks, Reason: body.Reason,
			Remember: body.Remember,
		})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, s.view(rec))
	}
}

// fail answers with the status an error deserves and a sentence for a person.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ad *action.AlreadyDecidedError
	switch {
	case errors.As(err, &ad):
		writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "state": ad.State, "decided_by": ad.By, "decided_at": ad.At})
	case errors.Is(err, action.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, action.ErrExpired):
		writeError(w, http.StatusGone, err.Error())
	case errors.Is(err, action.ErrForged):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, action.ErrBadPick), errors.Is(err, action.ErrNotReusable), errors.Is(err, action.ErrBadRemember):
		writeError(w, http.StatusUnprocessableEntity, err.Error())
	case slow(w, r, err):
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "buddi could not answer; the log says why")
	}
}

func (s *Server) listPermissions(w http.ResponseWriter, r *http.Request) {
	out, err := action.ListStanding(r.Context(), s.deps.Pool)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if out == nil {
		out = []action.Standing{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) revokePermission(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "no standing permission "+r.PathValue("id"))
		return
	}
	err = pgx.BeginFunc(r.Context(), s.deps.Pool, func(tx pgx.Tx) error { return action.Revoke(r.Context(), tx, id, "dashboard") })
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "revoked": true})
}
