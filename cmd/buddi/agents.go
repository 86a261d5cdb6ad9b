package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"buddi/agents"
	"buddi/examples"
	"buddi/runtime/account"
	runtimerun "buddi/runtime/run"
	"buddi/runtime/transport"
)

type agentsCmd struct {
	List agentsListCmd `cmd:"" default:"withargs" help:"List the agents: the shipped examples and yours."`
	Show agentsShowCmd `cmd:"" help:"Show one agent: its grant, roles, skills and persona."`
	Set  agentsSetCmd  `cmd:"" help:"Give an agent a provider account and a model."`
	Test agentsTestCmd `cmd:"" help:"Send one short prompt through the agent's account and say whether it works."`
	Mode agentsModeCmd `cmd:"" help:"Show or set an agent's mode: plan, accept-edits or auto (seed 002)."`
}

type agentsTestCmd struct {
	Agent string `arg:"" help:"The agent's handle (@dev) or id."`
	JSON  bool   `name:"json" help:"Print JSON: {\"ok\",\"sentence\",\"id\",\"handle\",\"account\",\"model\"}."`
}

// agentTestJSON is what agents test --json prints.
type agentTestJSON struct {
	OK       bool   `json:"ok"`       // the model answered
	Sentence string `json:"sentence"` // what the probe found, for the owner
	agentRef
	Account string `json:"account"`
	Model   string `json:"model"`
}

func (c agentsTestCmd) Run(env *runEnv) error {
	a, err := resolveAgent(c.Agent)
	if err != nil {
		return err
	}
	id := a.ID
	store, src, err := openAccounts(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	as, found, err := store.Assigned(env.ctx, id)
	if err != nil {
		return err
	}
	if !found && as.Refused != "" {
		return &exitError{code: 3, err: fmt.Errorf("%s's account assignment is refused (%s): %s", a.Handle, as.Refused, account.FixAssignment(a.Handle))}
	}
	if !found {
		return &exitError{code: 3, err: fmt.Errorf("%s has no provider account: give it one with `buddi agents set %s --account NAME --model MODEL`", a.Handle, a.Handle)}
	}
	out := agentTestJSON{agentRef: agentRef{ID: id, Handle: a.Handle}, Account: as.Account, Model: as.Model}
	// A running buddi is asked: its vault and accounts are the ones the agent's runs use.
	if status, server := serverAgents(); server != nil {
		st, ok := status[id]
		if !ok {
			return &exitError{code: 1, err: fmt.Errorf("the running buddi has no agent %s: `buddi agents list` shows who there is", a.Handle)}
		}
		if !st.ok {
			return &exitError{code: 3, err: fmt.Errorf("the running buddi cannot run %s: %s", a.Handle, st.sentence)}
		}
		var res struct {
			OK       bool   `json:"ok"`
			Sentence string `json:"sentence"`
		}
		if err := server.do("POST", "/api/accounts/"+url.PathEscape(as.Account)+"/test", map[string]string{"model": as.Model}, &res); err != nil {
			return err
		}
		out.OK, out.Sentence = res.OK, res.Sentence
		return agentTested(env, c.JSON, out)
	}
	acc, err := store.Get(env.ctx, as.Account)
	if err != nil {
		return accountExit(err)
	}
	v, err := openVault()
	if err != nil {
		return err
	}
	secret, err := v.Get(acc.SecretName)
	if err != nil {
		return &exitError{code: 3, err: fmt.Errorf("the account %s needs the vault entry %s (%v): set it with `buddi vault set %s`", acc.Name, acc.SecretName, err, acc.SecretName)}
	}
	p, err := account.New(acc, secret, transport.Config{})
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	out.Sentence, out.OK = account.Probe(env.ctx, p, as.Model)
	return agentTested(env, c.JSON, out)
}

// agentTested prints a probe's outcome; a model that did not answer exits 1.
func agentTested(env *runEnv, asJSON bool, out agentTestJSON) error {
	if err := report(env, asJSON, out, "%s", out.Sentence); err != nil {
		return err
	}
	if !out.OK {
		return &exitError{code: 1}
	}
	return nil
}

type agentsSetCmd struct {
	Agent   string `arg:"" help:"The agent's handle (@dev) or id."`
	Account string `required:"" help:"The provider account (see buddi accounts)."`
	Model   string `required:"" help:"The model id on that account's wire."`
	JSON    bool   `name:"json" help:"Print JSON: {\"ok\",\"id\",\"handle\",\"account\",\"model\"}."`
}

func (c agentsSetCmd) Run(env *runEnv) error {
	a, err := resolveAgent(c.Agent)
	if err != nil {
		return err
	}
	store, src, err := openAccounts(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	as, err := store.Assign(env.ctx, a.ID, c.Account, c.Model)
	if err != nil {
		return accountExit(err)
	}
	return report(env, c.JSON, acted(map[string]any{"id": a.ID, "handle": a.Handle, "account": as.Account, "model": as.Model}),
		"%s runs on %s with %s from its next run", a.Handle, as.Account, as.Model)
}

// loadCatalog loads the agents from the shipped examples and the owner's directories.
func loadCatalog() (*agents.Catalog, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	agentsDir, skillsDir := agents.OwnerDirs(cfg.Home, os.Getenv)
	return agents.Load(agents.Config{Examples: examples.FS, AgentsDir: agentsDir, SkillsDir: skillsDir})
}

type agentsListCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c agentsListCmd) Run(env *runEnv) error {
	cat, err := loadCatalog()
	if err != nil {
		return err
	}
	all := cat.All()
	status := agentStatus(env, all)
	modes, modeProblem := agentModes(env)
	if c.JSON {
		out := make([]map[string]any, 0, len(all))
		for _, a := range all {
			b, err := json.Marshal(a)
			if err != nil {
				return err
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				return err
			}
			st := status[a.ID]
			m["available"], m["problem"] = st.ok, st.sentence
			m["mode"] = modeWord(modes, modeProblem, a.ID)
			out = append(out, m)
		}
		return writeJSON(env, out)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HANDLE\tID\tNAME\tROLES\tTOOLS\tMODE\tSOURCE\tSTATUS")
	for _, a := range all {
		handle := a.Handle
		if a.Default {
			handle += " (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", handle, a.ID, a.Name, strings.Join(a.Roles, ","), len(a.Tools),
			modeWord(modes, modeProblem, a.ID), a.Source, status[a.ID].word)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, a := range all {
		if s := status[a.ID]; !s.ok && s.sentence != "" {
			fmt.Fprintf(env.stdout, "%s: %s\n", a.Handle, s.sentence)
		}
	}
	return nil
}

type agentsShowCmd struct {
	Agent string `arg:"" help:"The agent's handle (@dev) or id."`
	JSON  bool   `help:"Print JSON."`
}

func (c agentsShowCmd) Run(env *runEnv) error {
	cat, err := loadCatalog()
	if err != nil {
		return err
	}
	a, ok := cat.ByHandle(c.Agent)
	if !ok {
		a, ok = cat.ByID(c.Agent)
	}
	if !ok {
		return &exitError{code: 1, err: fmt.Errorf("no agent %q: list them with `buddi agents list`", c.Agent)}
	}
	if c.JSON {
		return writeJSON(env, a)
	}
	fmt.Fprintf(env.stdout, "%s %s (%s), from %s\n", a.Handle, a.Name, a.ID, a.Path)
	modes, modeProblem := agentModes(env)
	fmt.Fprintf(env.stdout, "roles:  %s\ntools:  %s\nmode:   %s\nskills: ", orNone(a.Roles), orNone(a.Tools), modeWord(modes, modeProblem, a.ID))
	var skills []string
	for _, s := range a.Loaded {
		skills = append(skills, s.Name)
	}
	fmt.Fprintf(env.stdout, "%s\n\n%s\n", orNone(skills), strings.TrimSpace(a.Persona))
	return nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// availability is whether an agent can run now, and if not, why.
type availability struct {
	ok       bool
	word     string // ready, or the problem's kind
	sentence string // what to do, for a problem
}

// agentStatus checks each agent's account, model and credential. Without a database the
// answer is unknown, said once.
// serverAgents asks the running buddi which agents can run, from its own vault and accounts
// (so the command line and the server can never disagree); nil when none answers, and the
// command line then checks for itself.
func serverAgents() (map[string]availability, *chatClient) {
	c, err := newChatClient()
	if err != nil {
		return nil, nil
	}
	var got struct {
		Agents []struct {
			ID        string `json:"id"`
			Available bool   `json:"available"`
			Problem   string `json:"problem"`
		} `json:"agents"`
	}
	if err := c.do("GET", "/api/agents", nil, &got); err != nil {
		return nil, nil
	}
	out := map[string]availability{}
	for _, a := range got.Agents {
		av := availability{ok: a.Available, word: "ready", sentence: a.Problem}
		if !a.Available {
			av.word = "unavailable"
		}
		out[a.ID] = av
	}
	return out, c
}

func agentStatus(env *runEnv, all []agents.Agent) map[string]availability {
	if status, server := serverAgents(); server != nil {
		for _, a := range all {
			if _, ok := status[a.ID]; !ok {
				status[a.ID] = availability{word: "unknown", sentence: "the running buddi does not know this agent yet (it reads the agent files as they change)"}
			}
		}
		return status
	}
	out := map[string]availability{}
	store, src, err := openAccounts(env)
	if err != nil {
		for _, a := range all {
			out[a.ID] = availability{word: "unknown", sentence: "no database to read the accounts from: " + err.Error()}
		}
		return out
	}
	defer closeSource(src)
	v, verr := openVault()
	for _, a := range all {
		if verr != nil {
			out[a.ID] = availability{word: "vault-locked", sentence: verr.Error()}
			continue
		}
		p, err := runtimerun.Check(env.ctx, store, v, a)
		switch {
		case err != nil:
			out[a.ID] = availability{word: "unknown", sentence: err.Error()}
		case p != nil:
			out[a.ID] = availability{word: p.Kind, sentence: p.Sentence}
		default:
			out[a.ID] = availability{ok: true, word: "ready"}
		}
	}
	return out
}
