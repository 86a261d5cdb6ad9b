package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"buddi/agents"
	"buddi/core/vault"
	"buddi/plugins"
	"buddi/runtime/account"
	"buddi/runtime/provider"
	"buddi/runtime/transport"
	"buddi/scheduler"
)

// Accounts is the model accounts' store as Settings → Accounts and models uses it
// (*account.Store).
type Accounts interface {
	// List returns every account.
	List(ctx context.Context) ([]account.Account, error)
	// Get returns the account name, or account.ErrNotFound.
	Get(ctx context.Context, name string) (account.Account, error)
	// Add stores a new account, or returns account.ErrExists or account.ErrInvalid.
	Add(ctx context.Context, a account.Account) (account.Account, error)
	// SetEnabled switches an account on or off.
	SetEnabled(ctx context.Context, name string, enabled bool) error
	// Assign sets the account and model agent runs on.
	Assign(ctx context.Context, agent, accountName, model string) (account.Assignment, error)
	// Assigned returns agent's assignment; found is false when it has none.
	Assigned(ctx context.Context, agent string) (as account.Assignment, found bool, err error)
}

// Vault is the vault the server reads its agents' keys from (vault.Vault): a key the owner
// types on the page is stored there, and never sent back.
type Vault interface {
	// Get returns the value stored under name.
	Get(name string) (string, error)
	// Set stores value under name.
	Set(name, value string) error
}

// Prober sends one short prompt through an account with model and says in one sentence
// whether it works (account.Probe); ok reports which.
type Prober interface {
	// Probe tests account a with secret and model.
	Probe(ctx context.Context, a account.Account, secret, model string) (sentence string, ok bool)
}

// AccountProbe is the Prober over the one outbound transport.
type AccountProbe struct {
	Transport transport.Config // the outbound transport's settings, as the runner's
}

// Probe builds a's provider with secret and asks it for one word.
func (p AccountProbe) Probe(ctx context.Context, a account.Account, secret, model string) (string, bool) {
	prov, err := account.New(a, secret, p.Transport)
	if err != nil {
		return fmt.Sprintf("The account cannot be used: %v.", err), false
	}
	return account.Probe(ctx, prov, model)
}

// Missions is the missions' store as the Missions page uses it (*scheduler.Store).
type Missions interface {
	// List returns every mission.
	List(ctx context.Context) ([]scheduler.Mission, error)
	// Add records a mission after checking its schedule.
	Add(ctx context.Context, m scheduler.Mission) (scheduler.Mission, error)
	// RunNow runs mission id now, besides its schedule.
	RunNow(ctx context.Context, id int64, now time.Time) (int64, error)
	// SetEnabled switches mission id on (from now) or off.
	SetEnabled(ctx context.Context, id int64, on bool, now time.Time) error
	// Keep answers "Still useful?" with keep: the silent runs are counted from zero again.
	Keep(ctx context.Context, id int64) error
	// Runs lists mission id's occurrences, newest first, each with its report's first line.
	Runs(ctx context.Context, id int64, limit int) ([]scheduler.Run, error)
	// OwnerZone is the zone a mission that names none is in.
	OwnerZone() string
}

// settingsRoutes registers Settings → Accounts and models, the first run and Missions, each
// when its parts are there.
func (s *Server) settingsRoutes() {
	d := s.deps
	if d.Accounts != nil && d.Vault != nil && d.Probe != nil {
		s.handle("GET /api/accounts", s.listAccounts)
		s.write("POST /api/accounts", s.addAccount)
		s.write("POST /api/accounts/{name}/test", s.testAccount)
		s.write("POST /api/accounts/{name}/enable", s.enableAccount(true))
		s.write("POST /api/accounts/{name}/disable", s.enableAccount(false))
		if d.Chat != nil && d.Chat.Catalog != nil {
			s.handle("GET /api/agents/settings", s.agentSettings)
			s.write("POST /api/agents/{agent}/account", s.setAgentAccount)
			s.write("POST /api/setup", s.setup)
		}
	}
	if d.Missions != nil {
		s.handle("GET /api/missions", s.listMissions)
		s.handle("GET /api/missions/when", s.missionWhen)
		s.handle("GET /api/missions/{id}/occurrences", s.missionRuns)
		s.write("POST /api/missions", s.addMission)
		s.write("POST /api/missions/{id}/run", s.missionRun)
		s.write("POST /api/missions/{id}/pause", s.missionSwitch(false))
		s.write("POST /api/missions/{id}/resume", s.missionSwitch(true))
		s.write("POST /api/missions/{id}/keep", s.missionKeep)
		s.write("POST /api/missions/{id}/stop", s.missionSwitch(false))
	}
	s.modeRoutes()
}

// accountJSON is an account as the page shows it: never its secret, only the vault entry's name.
type accountJSON struct {
	account.Account
	Agents []string `json:"agents"` // the agents that run on it
}

func (s *Server) listAccounts(w http.ResponseWriter, r *http.Request) {
	list, err := s.deps.Accounts.List(r.Context())
	if err != nil {
		s.failed(w, r, "the accounts could not be read", err)
		return
	}
	users := map[string][]string{}
	if s.deps.Chat != nil && s.deps.Chat.Catalog != nil {
		if cat, err := s.deps.Chat.Catalog(); err == nil {
			for _, a := range cat.All() {
				if as, found, err := s.deps.Accounts.Assigned(r.Context(), a.ID); err == nil && found {
					users[as.Account] = append(users[as.Account], a.ID)
				}
			}
		}
	}
	out := []accountJSON{}
	for _, a := range list {
		out = append(out, accountJSON{Account: a, Agents: append([]string{}, users[a.Name]...)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"accounts": out})
}

// newAccount is the add-account form. Secret is the key's value: stored in the vault under
// SecretName, never echoed back; empty uses the value the vault holds already.
type newAccount struct {
	Name       string `json:"name"`
	Wire       string `json:"wire"`
	BaseURL    string `json:"base_url"`
	SecretName string `json:"secret_name"`
	Secret     string `json:"secret"`
}

func (n newAccount) account() account.Account {
	return account.Account{Name: strings.TrimSpace(n.Name), Wire: provider.Wire(strings.TrimSpace(n.Wire)), Kind: provider.CredentialAPIKey,
		BaseURL: strings.TrimSpace(n.BaseURL), SecretName: strings.TrimSpace(n.SecretName), Enabled: true}
}

func (s *Server) addAccount(w http.ResponseWriter, r *http.Request) {
	var b newAccount
	if !decodeBody(w, r, &b) {
		return
	}
	a := b.account()
	if err := a.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// The vault's entry is written first, so an existing account's name is refused before
	// its key could be replaced (an account buddi did not seal may be added again).
	if old, err := s.deps.Accounts.Get(r.Context(), a.Name); err == nil && old.Refused == "" {
		writeError(w, http.StatusConflict, fmt.Sprintf("an account named %s exists already: choose another name", a.Name))
		return
	}
	if !s.storeSecret(w, a.SecretName, b.Secret) {
		return
	}
	added, err := s.deps.Accounts.Add(r.Context(), a)
	if errors.Is(err, account.ErrExists) {
		writeError(w, http.StatusConflict, fmt.Sprintf("an account named %s exists already: choose another name", a.Name))
		return
	}
	if err != nil {
		s.failed(w, r, "the account could not be added", err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"account": accountJSON{Account: added, Agents: []string{}}})
}

// storeSecret puts secret in the vault under name, or checks that the vault holds one when
// secret is empty; it answers the request and returns false when it cannot.
func (s *Server) storeSecret(w http.ResponseWriter, name, secret string) bool {
	if secret == "" {
		if v, err := s.deps.Vault.Get(name); err != nil || v == "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("the vault holds no %s: paste the key in the form", name))
			return false
		}
		return true
	}
	if err := s.deps.Vault.Set(name, secret); err != nil {
		writeError(w, http.StatusServiceUnavailable, vaultSentence(name, err))
		return false
	}
	return true
}

// vaultSentence says why the vault refused a key, without the key.
func vaultSentence(name string, err error) string {
	if le, ok := errors.AsType[*vault.LockedError](err); ok {
		return fmt.Sprintf("The vault is locked, so %s could not be stored: %s", name, le.Reason)
	}
	return fmt.Sprintf("The vault could not store %s: %v.", name, err)
}

type modelBody struct {
	Model string `json:"model"`
}

func (s *Server) testAccount(w http.ResponseWriter, r *http.Request) {
	var b modelBody
	if !decodeBody(w, r, &b) {
		return
	}
	if strings.TrimSpace(b.Model) == "" {
		writeError(w, http.StatusBadRequest, "say which model to test the account with")
		return
	}
	a, err := s.deps.Accounts.Get(r.Context(), r.PathValue("name"))
	if errors.Is(err, account.ErrNotFound) {
		writeError(w, http.StatusNotFound, "there is no account "+r.PathValue("name"))
		return
	}
	if err != nil {
		s.failed(w, r, "the account could not be read", err)
		return
	}
	if a.Refused != "" {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "sentence": fmt.Sprintf("The account is refused (%s): %s.", a.Refused, account.Fix(a.Name))})
		return
	}
	secret, err := s.deps.Vault.Get(a.SecretName)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "sentence": fmt.Sprintf("The vault gives no %s (%v): store the key again.", a.SecretName, err)})
		return
	}
	sentence, ok := s.deps.Probe.Probe(r.Context(), a, secret, strings.TrimSpace(b.Model))
	writeJSON(w, http.StatusOK, map[string]any{"ok": ok, "sentence": sentence})
}

func (s *Server) enableAccount(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := s.deps.Accounts.SetEnabled(r.Context(), r.PathValue("name"), on)
		if errors.Is(err, account.ErrNotFound) {
			writeError(w, http.StatusNotFound, "there is no account "+r.PathValue("name"))
			return
		}
		if err != nil {
			s.failed(w, r, "the account could not be switched", err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"name": r.PathValue("name"), "enabled": on})
	}
}

// agentSetting is one agent as Settings shows it: its roles, its account and model, and
// whether it can run (run.Check's sentence when not).
type agentSetting struct {
	ID        string   `json:"id"`
	Handle    string   `json:"handle"`
	Name      string   `json:"name"`
	Default   bool     `json:"default"`
	Roles     []string `json:"roles"`
	Tools     []string `json:"tools"`
	Account   string   `json:"account,omitempty"`
	Model     string   `json:"model,omitempty"`
	Available bool     `json:"available"`
	Problem   string   `json:"problem,omitempty"`
	// May is what the agent may do: each tool of its grant with its tier, the ones that run
	// without asking first.
	May []agentTool `json:"may"`
	// Mode is the agent's execution mode (plan, accept-edits, auto); empty when modes are not
	// served.
	Mode string `json:"mode,omitempty"`
	// ModeRefused says why the mode on record is not honoured (the agent is in plan mode).
	ModeRefused string `json:"mode_refused,omitempty"`
}

// agentTool is one tool an agent may call, as Settings → Agents shows it.
type agentTool struct {
	Name        string `json:"name"`        // "developer.run"
	Tier        string `json:"tier"`        // auto, gated, session
	Description string `json:"description"` // what the model is told it does, its first sentence
	Remember    bool   `json:"remember"`    // a card for it can be remembered (a standing permission)
	PerCall     bool   `json:"per_call"`    // the tool picks a stricter tier per call (a workspace's mode)
}

// mayDo is the tools of a's grant that the registry knows, auto first, by name.
func (s *Server) mayDo(a agents.Agent) []agentTool {
	out := []agentTool{}
	if s.deps.Tools == nil {
		return out
	}
	for _, spec := range s.deps.Tools.Tools() {
		if !a.HasTool(spec.Name) {
			continue
		}
		desc, _, _ := strings.Cut(spec.Description, ". ")
		tool, _ := s.deps.Tools.Lookup(spec.Name)
		_, perCall := tool.(plugins.TierNarrower)
		out = append(out, agentTool{Name: spec.Name, Tier: string(spec.Tier), Description: strings.TrimSuffix(desc, "."), Remember: spec.ReusableApproval, PerCall: perCall})
	}
	slices.SortStableFunc(out, func(x, y agentTool) int {
		if (x.Tier == "auto") != (y.Tier == "auto") {
			if x.Tier == "auto" {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Name, y.Name)
	})
	return out
}

// agentSettings lists every agent with its account and model and who holds which role.
func (s *Server) agentSettings(w http.ResponseWriter, r *http.Request) {
	list, err := s.agentList(r.Context())
	if err != nil {
		s.failed(w, r, "the agents could not be read", err)
		return
	}
	roles := map[string][]string{}
	for _, a := range list {
		for _, role := range a.Roles {
			roles[role] = append(roles[role], a.ID)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": list, "roles": roles})
}

func (s *Server) agentList(ctx context.Context) ([]agentSetting, error) {
	cat, err := s.deps.Chat.Catalog()
	if err != nil {
		return nil, fmt.Errorf("load the agents: %w", err)
	}
	out := []agentSetting{}
	for _, a := range cat.All() {
		j := agentSetting{ID: a.ID, Handle: a.Handle, Name: a.Name, Default: a.Default, Roles: append([]string{}, a.Roles...),
			Tools: append([]string{}, a.Tools...), Available: true, May: s.mayDo(a)}
		as, found, err := s.deps.Accounts.Assigned(ctx, a.ID)
		if err != nil {
			return nil, fmt.Errorf("read %s's account: %w", a.ID, err)
		}
		if found {
			j.Account, j.Model = as.Account, as.Model
		}
		if s.deps.Chat.Available != nil {
			j.Available, j.Problem = s.deps.Chat.Available(ctx, a.ID)
		}
		if err := s.modeOf(ctx, &j); err != nil {
			return nil, fmt.Errorf("read %s's mode: %w", a.ID, err)
		}
		out = append(out, j)
	}
	return out, nil
}

type assignBody struct {
	Account string `json:"account"`
	Model   string `json:"model"`
}

func (s *Server) setAgentAccount(w http.ResponseWriter, r *http.Request) {
	var b assignBody
	if !decodeBody(w, r, &b) {
		return
	}
	agent := r.PathValue("agent")
	cat, err := s.deps.Chat.Catalog()
	if err != nil {
		s.failed(w, r, "the agents could not be loaded", err)
		return
	}
	if _, ok := cat.ByID(agent); !ok {
		writeError(w, http.StatusNotFound, "there is no agent "+agent)
		return
	}
	as, err := s.deps.Accounts.Assign(r.Context(), agent, strings.TrimSpace(b.Account), strings.TrimSpace(b.Model))
	switch {
	case errors.Is(err, account.ErrNotFound):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("there is no account %s: add it first", b.Account))
	case errors.Is(err, account.ErrInvalid), errors.Is(err, account.ErrUnsealed):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		s.failed(w, r, "the agent's account could not be set", err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"assignment": as})
	}
}

// setupBody is the first-run form: a provider, its key and a model. The account is tested
// before anything is stored.
type setupBody struct {
	Wire    string `json:"wire"`
	BaseURL string `json:"base_url"`
	Secret  string `json:"secret"`
	Model   string `json:"model"`
}

// setup is the first run: it tests the key with the model, and once it works stores the key
// in the vault, adds the account and gives it to every agent that cannot run. Nothing is
// stored when the test fails.
func (s *Server) setup(w http.ResponseWriter, r *http.Request) {
	var b setupBody
	if !decodeBody(w, r, &b) {
		return
	}
	b.Model = strings.TrimSpace(b.Model)
	if b.Secret == "" || b.Model == "" {
		writeError(w, http.StatusBadRequest, "paste the provider's key and name a model")
		return
	}
	ctx := r.Context()
	name, err := s.freeAccountName(ctx, setupName(b.Wire, b.BaseURL))
	if err != nil {
		s.failed(w, r, "the accounts could not be read", err)
		return
	}
	a := newAccount{Name: name, Wire: b.Wire, BaseURL: b.BaseURL, SecretName: strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_API_KEY"}.account()
	if err := a.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	sentence, ok := s.deps.Probe.Probe(ctx, a, b.Secret, b.Model)
	if !ok {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "sentence": sentence})
		return
	}
	if !s.storeSecret(w, a.SecretName, b.Secret) {
		return
	}
	if _, err := s.deps.Accounts.Add(ctx, a); err != nil {
		s.failed(w, r, "the account could not be added", err)
		return
	}
	list, err := s.agentList(ctx)
	if err != nil {
		s.failed(w, r, "the agents could not be read", err)
		return
	}
	given := []string{}
	for _, ag := range list {
		if ag.Available {
			continue
		}
		if _, err := s.deps.Accounts.Assign(ctx, ag.ID, a.Name, b.Model); err != nil {
			s.failed(w, r, "the account could not be given to "+ag.ID, err)
			return
		}
		given = append(given, ag.ID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "sentence": sentence, "account": a.Name, "agents": given})
}

var unnamed = regexp.MustCompile(`[^a-z0-9-]+`)

// setupName names the first account after its provider: anthropic, openai, or the host of an
// OpenAI-compatible base URL.
func setupName(wire, baseURL string) string {
	if baseURL == "" {
		return wire
	}
	host := baseURL
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	host, _, _ = strings.Cut(host, "/")
	host, _, _ = strings.Cut(host, ":")
	n := strings.Trim(unnamed.ReplaceAllString(strings.ToLower(host), "-"), "-")
	if n == "" || n[0] < 'a' || n[0] > 'z' {
		n = "local"
	}
	if len(n) > 40 {
		n = n[:40]
	}
	return n
}

// freeAccountName is base, or base-2, base-3 … when it is taken.
func (s *Server) freeAccountName(ctx context.Context, base string) (string, error) {
	list, err := s.deps.Accounts.List(ctx)
	if err != nil {
		return "", err
	}
	taken := func(n string) bool {
		return slices.ContainsFunc(list, func(a account.Account) bool { return a.Name == n })
	}
	name := base
	for i := 2; taken(name); i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name, nil
}

// missionJSON is a mission as the page shows it.
type missionJSON struct {
	scheduler.Mission
	StillUseful bool   `json:"still_useful"` // "Still useful?" was raised: Keep or Stop
	Words       string `json:"words"`        // its schedule in words
}

// newMissionJSON is m as the page shows it.
func newMissionJSON(m scheduler.Mission) missionJSON {
	out := missionJSON{Mission: m, StillUseful: m.StillUseful(), Words: m.Cron}
	if sched, err := scheduler.Parse(m.Cron, m.Timezone); err == nil {
		out.Words = sched.Words()
	}
	return out
}

func (s *Server) listMissions(w http.ResponseWriter, r *http.Request) {
	list, err := s.deps.Missions.List(r.Context())
	if err != nil {
		s.failed(w, r, "the missions could not be read", err)
		return
	}
	out := []missionJSON{}
	for _, m := range list {
		out = append(out, newMissionJSON(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"missions": out})
}

type missionBody struct {
	Name   string `json:"name"`
	Agent  string `json:"agent"`
	Cron   string `json:"cron"`
	When   string `json:"when"` // the schedule in words, or cron; read when cron is empty
	Prompt string `json:"prompt"`
}

// missionWhen previews a schedule the owner is writing, in words or cron: its cron, its
// words and its next three times in the owner's zone, or the sentence saying how to write it.
func (s *Server) missionWhen(w http.ResponseWriter, r *http.Request) {
	when, err := scheduler.ReadWhen(r.URL.Query().Get("words"), s.deps.Missions.OwnerZone(), time.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, whenJSON(when))
}

// whenJSON is a read schedule as the page shows it: its next times also as the owner's wall
// clock ("Mon Jan 2 15:04").
func whenJSON(when scheduler.When) map[string]any {
	loc, err := time.LoadLocation(when.Zone)
	if err != nil {
		loc = time.UTC
	}
	said := []string{}
	for _, t := range when.Next {
		said = append(said, t.In(loc).Format("Mon Jan 2 15:04"))
	}
	return map[string]any{"cron": when.Cron, "words": when.Words, "zone": when.Zone, "next": when.Next, "next_said": said}
}

// missionRuns lists a mission's occurrences: what ran when, its state (coalesced or skipped
// in its reason), and its report's first line.
func (s *Server) missionRuns(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	runs, err := s.deps.Missions.Runs(r.Context(), id, 50)
	if err != nil {
		s.failed(w, r, fmt.Sprintf("the runs of mission %d could not be read", id), err)
		return
	}
	if runs == nil {
		runs = []scheduler.Run{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"occurrences": runs})
}

func (s *Server) addMission(w http.ResponseWriter, r *http.Request) {
	var b missionBody
	if !decodeBody(w, r, &b) {
		return
	}
	m := scheduler.Mission{Name: strings.TrimSpace(b.Name), Agent: strings.TrimSpace(b.Agent), Cron: strings.TrimSpace(b.Cron), Prompt: strings.TrimSpace(b.Prompt)}
	if m.Cron == "" && strings.TrimSpace(b.When) != "" {
		when, err := scheduler.ReadWhen(b.When, s.deps.Missions.OwnerZone(), time.Now())
		if err != nil {
			writeError(w, http.StatusBadRequest, "the mission was not added: "+err.Error())
			return
		}
		m.Cron = when.Cron
	}
	if m.Name == "" || m.Agent == "" || m.Cron == "" || m.Prompt == "" {
		writeError(w, http.StatusBadRequest, "a mission needs a name, an agent, a schedule and a prompt")
		return
	}
	if s.deps.Chat != nil && s.deps.Chat.Catalog != nil {
		cat, err := s.deps.Chat.Catalog()
		if err != nil {
			s.failed(w, r, "the agents could not be loaded", err)
			return
		}
		if _, ok := cat.ByID(m.Agent); !ok {
			writeError(w, http.StatusBadRequest, "there is no agent "+m.Agent+": pick one of the list")
			return
		}
	}
	added, err := s.deps.Missions.Add(r.Context(), m)
	if err != nil {
		if slow(w, r, err) {
			return
		}
		writeError(w, http.StatusBadRequest, "the mission was not added: "+err.Error())
		return
	}
	out := map[string]any{"mission": newMissionJSON(added)}
	if when, err := scheduler.ReadWhen(added.Cron, added.Timezone, time.Now()); err == nil {
		out["when"] = whenJSON(when)
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) missionRun(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	occ, err := s.deps.Missions.RunNow(r.Context(), id, time.Now())
	if s.missionErr(w, r, id, err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"occurrence": occ})
}

func (s *Server) missionSwitch(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok {
			return
		}
		if s.missionErr(w, r, id, s.deps.Missions.SetEnabled(r.Context(), id, on, time.Now())) {
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "enabled": on})
	}
}

func (s *Server) missionKeep(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if s.missionErr(w, r, id, s.deps.Missions.Keep(r.Context(), id)) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "kept": true})
}

// missionErr answers a mission write that failed, and says whether it did.
func (s *Server) missionErr(w http.ResponseWriter, r *http.Request, id int64, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, scheduler.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("there is no mission %d", id))
	default:
		s.failed(w, r, fmt.Sprintf("mission %d could not be changed", id), err)
	}
	return true
}

// failed answers a request whose store failed: 503 for a database that did not answer in
// time, 500 otherwise, logged.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, what string, err error) {
	if slow(w, r, err) {
		return
	}
	s.log.Error(what, "err", err)
	writeError(w, http.StatusInternalServerError, what+": "+err.Error())
}
