package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/queue"
	"buddi/web"
)

// Jobs is failed work as the owner decides on it (seed 004, "Failed jobs are decisions").
type Jobs interface {
	// Failed lists the failed jobs and their causes; dismissed ones too when all.
	Failed(ctx context.Context, all bool) (FailedJobs, error)
	// Retry runs a failed job again.
	Retry(ctx context.Context, id int64) error
	// Dismiss keeps a failed job on record but out of the counts.
	Dismiss(ctx context.Context, id int64) error
	// Cancel gives a job up: one still queued, retrying or running is cancelled and never
	// tried again, and a failed one is kept on record, out of the counts, as cancelled by the
	// owner. It returns the job's state after.
	Cancel(ctx context.Context, id int64) (string, error)
}

// Developer is Settings → Developer (seed 000 §8), over the developer plugin's records.
type Developer interface {
	// Settings returns the workspaces with their modes, the running processes, the commands
	// the owner allowed, and the page's sentence.
	Settings(ctx context.Context) (DeveloperSettings, error)
	// SetMode sets an agent's mode (ask, edit or run).
	SetMode(ctx context.Context, agent, mode string) error
	// StopProcess stops one process of an agent.
	StopProcess(ctx context.Context, agent, name string) error
	// StopAll stops every process of every agent and says how many.
	StopAll(ctx context.Context) (int, error)
	// Forget forgets an allowed command.
	Forget(ctx context.Context, id int64) error
	// SetTailnetPreviews sets the Tailscale switch: each started process also gets its port
	// on the tailnet (§12).
	SetTailnetPreviews(ctx context.Context, on bool) error
}

// FailedJobs is the Jobs page: the failed jobs, and the same grouped by cause.
type FailedJobs struct {
	Failed []queue.FailedJob `json:"failed"` // newest first
	Causes []queue.Cause     `json:"causes"` // the same, grouped by cause
}

// DeveloperSettings is Settings → Developer.
type DeveloperSettings struct {
	Sentence   string               `json:"sentence"`   // what a workspace exposes to its agent
	Workspaces []DeveloperWorkspace `json:"workspaces"` // each agent's workspace and mode
	Processes  []DeveloperProcess   `json:"processes"`  // the long-lived processes, running or lately ended
	Allowed    []AllowedCommand     `json:"allowed"`    // the commands the owner allowed
	Tailnet    TailnetSwitch        `json:"tailnet"`    // the switch that puts each process on the tailnet
}

// DeveloperWorkspace is one agent's workspace and mode.
type DeveloperWorkspace struct {
	Agent     string `json:"agent"`     // the agent's id
	Directory string `json:"directory"` // its workspace
	Mode      string `json:"mode"`      // ask, edit or run
}

// DeveloperProcess is one long-lived process as the page lists it.
type DeveloperProcess struct {
	ID        int64     `json:"id"`             // its row
	Agent     string    `json:"agent"`          // whose workspace it runs in
	Name      string    `json:"name"`           // its name, unique while it runs
	Pid       int       `json:"pid"`            // its process id
	Argv      []string  `json:"argv"`           // its command
	Cwd       string    `json:"cwd"`            // where it runs
	Port      *int      `json:"port"`           // the port it said it listens on, if any
	LogPath   string    `json:"log_path"`       // its output
	StartedAt time.Time `json:"started_at"`     // when it (last) started
	Running   bool      `json:"running"`        // that very process still runs
	State     string    `json:"state"`          // running, restarting, exited, stopped or gave_up
	Restarts  int       `json:"restarts"`       // how often it was started again after a crash
	Note      string    `json:"note,omitempty"` // the owner's sentence, when it ended or was given up
}

// AllowedCommand is a command the owner allowed an agent (an "always" on a card).
type AllowedCommand struct {
	ID        int64  `json:"id"`        // its row
	Agent     string `json:"agent"`     // the agent it is allowed to
	Workspace string `json:"workspace"` // in which workspace
	Command   string `json:"command"`   // the command's words
	Prefix    bool   `json:"prefix"`    // further words allowed after them
}

// TailnetSwitch is the Tailscale switch on Settings → Developer.
type TailnetSwitch struct {
	Previews bool   `json:"previews"` // the switch is on
	Node     bool   `json:"node"`     // this buddi runs the tailnet node
	Sentence string `json:"sentence"` // what it exposes
}

// ErrNotFound is what a Jobs or Developer implementation returns for an unknown id or name.
var ErrNotFound = errors.New("not found")

// decodeBody reads a small JSON body into v, refusing unknown fields.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not what this route takes: "+err.Error())
		return false
	}
	return true
}

func pathID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		writeError(w, http.StatusNotFound, "no such id")
		return 0, false
	}
	return id, true
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, err error, ok any) {
	if err != nil && slow(w, r, err) {
		return
	}
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, ok)
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	default:
		s.log.Error("request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "that did not work: "+err.Error())
	}
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	jobs, err := s.deps.Jobs.Failed(r.Context(), r.URL.Query().Get("all") == "1")
	s.answer(w, r, err, jobs)
}

func (s *Server) retryJob(w http.ResponseWriter, r *http.Request) {
	if id, ok := pathID(w, r); ok {
		s.answer(w, r, s.deps.Jobs.Retry(r.Context(), id), map[string]any{"retried": id})
	}
}

func (s *Server) dismissJob(w http.ResponseWriter, r *http.Request) {
	if id, ok := pathID(w, r); ok {
		s.answer(w, r, s.deps.Jobs.Dismiss(r.Context(), id), map[string]any{"dismissed": id})
	}
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) {
	if id, ok := pathID(w, r); ok {
		state, err := s.deps.Jobs.Cancel(r.Context(), id)
		s.answer(w, r, err, map[string]any{"cancelled": id, "state": state})
	}
}

func (s *Server) developerSettings(w http.ResponseWriter, r *http.Request) {
	v, err := s.deps.Developer.Settings(r.Context())
	s.answer(w, r, err, v)
}

func (s *Server) setMode(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Mode string `json:"mode"`
	}
	if decodeBody(w, r, &b) {
		s.answer(w, r, s.deps.Developer.SetMode(r.Context(), r.PathValue("agent"), b.Mode), map[string]any{"agent": r.PathValue("agent"), "mode": b.Mode})
	}
}

func (s *Server) setTailnetPreviews(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Previews *bool `json:"previews"`
	}
	if !decodeBody(w, r, &b) {
		return
	}
	if b.Previews == nil {
		writeError(w, http.StatusBadRequest, `say {"previews": true} or {"previews": false}`)
		return
	}
	s.answer(w, r, s.deps.Developer.SetTailnetPreviews(r.Context(), *b.Previews), map[string]any{"previews": *b.Previews})
}

func (s *Server) stopProcess(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, s.deps.Developer.StopProcess(r.Context(), r.PathValue("agent"), r.PathValue("name")), map[string]any{"stopped": r.PathValue("name")})
}

func (s *Server) stopAll(w http.ResponseWriter, r *http.Request) {
	n, err := s.deps.Developer.StopAll(r.Context())
	s.answer(w, r, err, map[string]any{"stopped": n})
}

func (s *Server) forget(w http.ResponseWriter, r *http.Request) {
	if id, ok := pathID(w, r); ok {
		s.answer(w, r, s.deps.Developer.Forget(r.Context(), id), map[string]any{"forgotten": id})
	}
}

// listEvents is Activity's timeline: the latest events, newest first, or those after ?after=,
// each told in words beside its payload.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	f := eventlog.Filter{AfterID: after, Limit: limit, Kind: r.URL.Query().Get("kind"), Newest: after == 0}
	evs, err := eventlog.List(r.Context(), s.deps.Pool, f)
	out := make([]timelineEvent, 0, len(evs))
	for _, e := range evs {
		out = append(out, describe(e))
	}
	s.answer(w, r, err, map[string]any{"events": out})
}

// attention is the agent rail (seed 004, "The attention model"): per agent, the pending
// approvals (a count), a held question (a dot), and whether it can run (with why not). An
// approval raised inside a delegation counts for every agent that asked on the way down
// too: the chain its run pinned in run.started.
func (s *Server) attention(w http.ResponseWriter, r *http.Request) {
	cat, err := s.deps.Chat.Catalog()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the agents could not be loaded: "+err.Error())
		return
	}
	pending, err := pendingByAgent(r.Context(), s.deps.Pool)
	if err != nil {
		s.answer(w, r, err, nil)
		return
	}
	held, err := s.deps.Chat.Conversations.HeldQuestions(r.Context())
	if err != nil {
		s.answer(w, r, err, nil)
		return
	}
	type rail struct {
		agentJSON
		Pending  int  `json:"pending"`
		Question bool `json:"question"`
	}
	out := []rail{}
	for _, a := range cat.All() {
		j := rail{agentJSON: agentJSON{ID: a.ID, Handle: a.Handle, Name: a.Name, Default: a.Default, Roles: a.Roles, Available: true},
			Pending: pending[a.ID], Question: held[a.ID] > 0}
		if s.deps.Chat.Available != nil {
			j.Available, j.Problem = s.deps.Chat.Available(r.Context(), a.ID)
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

// pendingByAgent counts the pending approvals of each agent: its own, and those raised in a
// run delegated from it, however deep (each approval once per agent).
func pendingByAgent(ctx context.Context, q eventlog.Querier) (map[string]int, error) {
	rows, err := q.Query(ctx, `SELECT a.agent, COALESCE(e.payload->'chain', '[]'::jsonb) FROM core.actions a
		JOIN core.approvals p ON p.action_id = a.id
		LEFT JOIN LATERAL (SELECT payload FROM core.events WHERE payload->>'run_id' = a.run_id AND kind = $1
			ORDER BY id LIMIT 1) e ON a.run_id <> ''
		WHERE p.state = 'pending'`, events.RunStarted)
	if err != nil {
		return nil, fmt.Errorf("count the pending approvals: %w", err)
	}
	defer rows.Close()
	pending := map[string]int{}
	for rows.Next() {
		var agent string
		var chain []string
		if err := rows.Scan(&agent, &chain); err != nil {
			return nil, fmt.Errorf("count the pending approvals: %w", err)
		}
		counted := map[string]bool{}
		for _, a := range append(chain, agent) {
			if a != "" && !counted[a] {
				counted[a] = true
				pending[a]++
			}
		}
	}
	return pending, rows.Err()
}

// stopRun stops the turn running in a conversation (the Chat page's Stop).
func (s *Server) stopRun(w http.ResponseWriter, r *http.Request) {
	if s.deps.Chat.Stop == nil {
		writeError(w, http.StatusNotImplemented, "stopping is not available")
		return
	}
	err := s.deps.Chat.Stop(r.Context(), r.PathValue("id"))
	if errors.Is(err, ErrNothingToStop) {
		writeError(w, http.StatusConflict, "nothing is running in this conversation (a turn that waits on a card stops when you reject the card)")
		return
	}
	s.answer(w, r, err, map[string]any{"stopping": r.PathValue("id")})
}

// ErrNothingToStop means no turn is running in the conversation.
var ErrNothingToStop = errors.New("nothing is running")

// liveEvents is the dashboard's live channel: a websocket that says "events up to N exist"
// whenever the event log grows, so every page re-reads what it shows from the log (a reload
// shows the same state: it is projected from the log, not from this channel).
func (s *Server) liveEvents(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "buddi is stopping")
		return
	}
	s.sockets.Add(1)
	s.mu.Unlock()
	defer s.sockets.Done()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	if p := s.deps.Presence; p != nil { // a page is open: the owner is here
		p.open.Add(1)
		defer p.open.Add(-1)
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		defer cancel()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	var last int64 = -1
	tick := time.NewTicker(400 * time.Millisecond)
	defer tick.Stop()
	for {
		var id int64
		if err := s.deps.Pool.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM core.events`).Scan(&id); err == nil && id != last {
			last = id
			_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := conn.WriteJSON(map[string]any{"type": "events", "last_id": id}); err != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "buddi is stopping"), time.Now().Add(time.Second))
			return
		case <-tick.C:
		}
	}
}

// webUI serves the page (web/, embedded: no build step) with a policy that keeps it to its own
// origin and out of frames.
func webUI() http.Handler {
	files := http.FileServerFS(web.FS)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if pageFile(r.URL.Path) {
			files.ServeHTTP(w, r)
			return
		}
		writeError(w, http.StatusNotFound, "no such page")
	})
}

// pageFile reports whether path is the page or one of its modules and styles: "/",
// "/index.html", or a .js or .css file at the root of web.FS (a module the page imports is
// served as soon as it is embedded).
func pageFile(path string) bool {
	if path == "/" || path == "/index.html" {
		return true
	}
	name := strings.TrimPrefix(path, "/")
	if strings.ContainsAny(name, "/\\") || (!strings.HasSuffix(name, ".js") && !strings.HasSuffix(name, ".css")) {
		return false
	}
	info, err := fs.Stat(web.FS, name)
	return err == nil && !info.IsDir()
}

// Previews issues preview links and reports on previews (seed 000 §12); the app
// implements it over the preview server.
type Previews interface {
	// Link returns the URL, on host and the preview port, with a single-use ticket.
	Link(ctx context.Context, host, plugin, name string) (string, error)
	// Check reports whether the preview can be opened and whether it uses absolute assets.
	Check(ctx context.Context, plugin, name string) PreviewCheck
}

// PreviewCheck is what a preview's check says.
type PreviewCheck struct {
	OK             bool   `json:"ok"`                // the preview can be opened now
	AbsoluteAssets bool   `json:"absoluteAssets"`    // its first page referenced /… assets
	Problem        string `json:"problem,omitempty"` // why not, when not OK
}

// previewLink is GET /api/preview/{plugin}/{name}/link, behind the dashboard's gate.
func (s *Server) previewLink(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	u, err := s.deps.Previews.Link(r.Context(), strings.Trim(host, "[]"), r.PathValue("plugin"), r.PathValue("name"))
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"url": u})
}

// previewCheck is GET /api/preview/{plugin}/{name}/check.
func (s *Server) previewCheck(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Previews.Check(r.Context(), r.PathValue("plugin"), r.PathValue("name")))
}

// Artifacts opens stored files (screenshots) for the page.
type Artifacts interface {
	// Open returns an artifact's media type and bytes, or an error matching ErrNotFound.
	Open(ctx context.Context, id string) (mediaType string, data []byte, err error)
}

// artifact serves GET /api/artifacts/{id}: the file, with its media type, never sniffed or
// rendered as a page of buddi's origin.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	mediaType, data, err := s.deps.Artifacts.Open(r.Context(), r.PathValue("id"))
	if err != nil {
		s.answer(w, r, err, nil)
		return
	}
	switch mediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		mediaType = "application/octet-stream"
		w.Header().Set("Content-Disposition", "attachment")
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	_, _ = w.Write(data)
}
