package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"buddi/core/executor"
	"buddi/core/permission"
)

// AgentModes is the agents' execution modes (seed 002: plan, accept-edits, auto) as the
// agent cards show and set them (*executor.Modes).
type AgentModes interface {
	// Mode returns agent's mode, read now.
	Mode(ctx context.Context, agent string) (executor.AgentMode, error)
	// SetMode records agent's mode as set by by ("owner:dashboard").
	SetMode(ctx context.Context, agent string, mode permission.Mode, by string) (executor.AgentMode, error)
}

// modeRoutes registers POST /api/agents/{agent}/mode when the modes and the agents are
// there; GET /api/agents/settings then carries each agent's mode.
func (s *Server) modeRoutes() {
	if s.deps.Modes == nil || s.deps.Chat == nil || s.deps.Chat.Catalog == nil {
		return
	}
	s.write("POST /api/agents/{agent}/mode", s.setAgentMode)
}

// modeOf fills an agent card's mode; nothing when the modes are not served.
func (s *Server) modeOf(ctx context.Context, j *agentSetting) error {
	if s.deps.Modes == nil {
		return nil
	}
	m, err := s.deps.Modes.Mode(ctx, j.ID)
	if err != nil {
		return err
	}
	j.Mode, j.ModeRefused = string(m.Mode), m.Refused
	return nil
}

// modeBody is the mode select's answer.
type modeBody struct {
	Mode string `json:"mode"` // plan, accept-edits or auto
}

// setAgentMode sets one agent's mode (by id or handle); it applies to the agent's next call.
func (s *Server) setAgentMode(w http.ResponseWriter, r *http.Request) {
	var b modeBody
	if !decodeBody(w, r, &b) {
		return
	}
	cat, err := s.deps.Chat.Catalog()
	if err != nil {
		s.failed(w, r, "the agents could not be loaded", err)
		return
	}
	name := r.PathValue("agent")
	a, ok := cat.ByID(name)
	if !ok {
		a, ok = cat.ByHandle(name)
	}
	if !ok {
		writeError(w, http.StatusNotFound, "there is no agent "+name)
		return
	}
	mode := permission.Mode(strings.TrimSpace(b.Mode))
	m, err := s.deps.Modes.SetMode(r.Context(), a.ID, mode, "owner:dashboard")
	switch {
	case errors.Is(err, executor.ErrBadMode):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		s.failed(w, r, "the agent's mode could not be set", err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"agent": a.ID, "handle": a.Handle, "mode": m.Mode})
	}
}
