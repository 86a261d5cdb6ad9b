package doctor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"buddi/config"
	"buddi/core/seal"
	"buddi/core/vault"
	"buddi/dbsource"
	"buddi/health"
	"buddi/internal/timezone"
	"buddi/runtime/account"
	runtimerun "buddi/runtime/run"
)

// vaultFix is what to do about a vault the running buddi cannot read.
const vaultFix = "Run `buddi init` to keep the vault key where every buddi finds it (a running buddi without a key opens its vault once it is there); a vault locked by a wrong key needs buddi restarted with the right one."

// checkServerVault reads the running buddi's vault from its health report: the vault that
// matters is the server's, whatever this shell's environment holds.
func (r *Report) checkServerVault(rep *health.Report) {
	switch v := rep.Vault; {
	case v == nil:
		r.warn("vault", "this buddi does not say whether its vault is open; the agents' lines say whether their keys can be read.",
			"Restart buddi with this version (`buddi serve`) so doctor can ask it.")
	case v.Open:
		r.ok("vault", "open in the running buddi ("+v.Where+").")
	default:
		r.fail("vault", "the running buddi's vault is locked, so no agent can read its model key: "+firstSentence(v.Problem)+".", vaultFix)
	}
}

// checkLocalVault is the vault as this command line opens it, when no buddi serves: buddi
// serve started from the same environment opens the same.
func (r *Report) checkLocalVault(o Options) {
	switch {
	case o.Vault == nil && o.VaultErr != nil:
		r.fail("vault", "the vault could not be opened: "+o.VaultErr.Error()+".", "Set BUDDI_KEYCHAIN to auto or off, or run `buddi init`.")
	case o.Vault == nil:
		return
	default:
		if err := o.Vault.Check(); err != nil {
			reason := err.Error()
			var le *vault.LockedError
			if errors.As(err, &le) {
				reason = le.Reason
			}
			r.fail("vault", "the vault is locked for this command line (nothing serves to ask): "+firstSentence(reason)+".", vaultFix)
			return
		}
		r.ok("vault", "open for this command line ("+o.Vault.String()+"); start buddi from the same environment.")
	}
}

// checkZone says whether the owner's time zone is known: missions and reminders without one
// are read in it. A zone the machine names but buddi has not saved is saved by --fix.
func (r *Report) checkZone(home string, z timezone.Zone, fix bool) {
	if z.Name == "" {
		return
	}
	if !z.Found() {
		r.warn("time zone", "no time zone is set on this machine, so missions and reminders are read in UTC.",
			"Save yours with `buddi init --tz Europe/Berlin` (your zone), or set TZ where buddi starts.")
		return
	}
	if z.Source == timezone.FromSaved {
		r.ok("time zone", fmt.Sprintf("%s (saved in %s).", z.Name, home))
		return
	}
	if fix {
		if err := timezone.Save(home, z.Name); err != nil {
			r.warn("time zone", fmt.Sprintf("%s (from %s) could not be saved: %v.", z.Name, z.Source, err), "Check that "+home+" can be written.")
			return
		}
		r.ok("time zone", fmt.Sprintf("%s (from %s), saved now.", z.Name, z.Source))
		return
	}
	r.ok("time zone", fmt.Sprintf("%s (from %s; not saved, so it follows the machine: `buddi doctor --fix` saves it).", z.Name, z.Source))
}

// Agent is one agent and whether it can answer.
type Agent struct {
	ID        string `json:"id"`                // the agent's id
	Handle    string `json:"handle"`            // its @handle
	Default   bool   `json:"default"`           // it answers when no agent is named
	Available bool   `json:"available"`         // it has a working account
	Problem   string `json:"problem,omitempty"` // why not, and what to do, in one sentence
	Assigned  bool   `json:"assigned"`          // the owner gave it an account (working or not)
}

// checkAgents says for each agent whether it can answer, as the running buddi sees it (its
// vault, its accounts), else as this command line does. An agent the owner gave an account
// to that cannot use it, and the default agent without one, are failures; another agent
// without an account is a warning.
func (r *Report) checkAgents(ctx context.Context, cfg config.Config, src *dbsource.Source, o Options) {
	var list []Agent
	var where string
	if r.Serving != nil {
		var got struct {
			Agents []Agent `json:"agents"`
		}
		if err := ask(ctx, cfg, "/api/agents", &got); err != nil {
			r.fail("agents", "the running buddi did not list its agents: "+err.Error()+".", "Read buddi's log, and run `buddi agents list`.")
			return
		}
		list = got.Agents
	} else {
		var err error
		if list, err = localAgents(ctx, cfg, src, o); err != nil {
			r.warn("agents", "the agents' accounts could not be checked: "+err.Error()+".", "Start buddi with `buddi serve` and run `buddi doctor` again.")
			return
		}
		where = " (as this command line sees it)"
	}
	assigned := map[string]bool{}
	if rows, err := src.Pool.Query(ctx, `SELECT agent FROM core.agent_provider_accounts`); err == nil {
		for rows.Next() {
			var a string
			if rows.Scan(&a) == nil {
				assigned[a] = true
			}
		}
		rows.Close()
	}
	working, failed := 0, 0
	for i := range list {
		a := &list[i]
		a.Assigned = assigned[a.ID]
		name := "agent " + a.Handle
		if a.Available {
			working++
			r.ok(name, a.Handle+" can answer"+where+".")
			continue
		}
		sentence, fix := splitProblem(a.Problem)
		switch {
		case a.Assigned, a.Default:
			failed++
			r.fail(name, sentence+where+".", fix)
		default:
			r.warn(name, sentence+where+".", fix)
		}
	}
	r.Agents = list
	if len(list) > 0 && working == 0 && failed == 0 {
		r.fail("agents", "no agent can answer: each needs a model account whose key the vault holds.", "Run `buddi init` to set one up, or `buddi agents set AGENT --account NAME --model MODEL`.")
	}
}

// firstSentence is s up to its first full stop, without it: the part of a reason that says
// what is wrong (the fix is said once, in the check's own).
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if before, _, ok := strings.Cut(s, ". "); ok {
		return before
	}
	return strings.TrimSuffix(s, ".")
}

// splitProblem splits a problem ("X has no model account yet: give it one with …") into what
// is wrong and what to do, each a sentence.
func splitProblem(p string) (sentence, fix string) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "it cannot answer, and buddi did not say why", "Run `buddi agents list` and read buddi's log."
	}
	what, do, ok := strings.Cut(p, ": ")
	if !ok {
		return strings.TrimSuffix(p, "."), "Run `buddi agents list` and read buddi's log."
	}
	do = strings.TrimSpace(do)
	if do != "" {
		do = strings.ToUpper(do[:1]) + do[1:]
	}
	if !strings.HasSuffix(do, ".") {
		do += "."
	}
	return what, do
}

// localAgents checks the agents as this command line sees them (its vault), when no buddi
// serves. The seal key is only read: doctor creates nothing in the data directory.
func localAgents(ctx context.Context, cfg config.Config, src *dbsource.Source, o Options) ([]Agent, error) {
	if o.Catalog == nil {
		return nil, errors.New("no agents to check")
	}
	cat, err := o.Catalog()
	if err != nil {
		return nil, fmt.Errorf("the agents could not be loaded (%w)", err)
	}
	raw, err := seal.ReadSecret(filepath.Join(cfg.Home, seal.FileName))
	if err != nil {
		return nil, fmt.Errorf("buddi has not been started with this data directory yet (%w)", err)
	}
	key, err := seal.New(raw)
	if err != nil {
		return nil, err
	}
	store := account.NewStore(src.Pool, key)
	var secrets runtimerun.Secrets = lockedSecrets{o.VaultErr}
	if o.Vault != nil {
		secrets = o.Vault
	}
	var out []Agent
	for _, a := range cat.All() {
		ag := Agent{ID: a.ID, Handle: a.Handle, Default: a.Default, Available: true}
		p, err := runtimerun.Check(ctx, store, secrets, a)
		switch {
		case err != nil:
			ag.Available, ag.Problem = false, "its account could not be read ("+err.Error()+"): run `buddi agents list`"
		case p != nil:
			ag.Available, ag.Problem = false, p.Sentence
		}
		out = append(out, ag)
	}
	return out, nil
}

// lockedSecrets is the vault when it could not be opened at all.
type lockedSecrets struct{ err error }

func (l lockedSecrets) Get(string) (string, error) {
	return "", &vault.LockedError{Reason: "the vault could not be opened", Err: l.err}
}

// checkTelegramPaired says whether a phone is paired, when Telegram is on.
func (r *Report) checkTelegramPaired(ctx context.Context, src *dbsource.Source) {
	if r.Serving == nil || r.Serving.Telegram == nil {
		return
	}
	var n int
	if err := src.Pool.QueryRow(ctx, `SELECT count(*) FROM core.surface_identities WHERE surface = 'telegram' AND unpaired_at IS NULL`).Scan(&n); err != nil {
		return
	}
	if n == 0 {
		r.warn("telegram pairing", "the bot runs but no phone is paired, so nothing reaches you on Telegram.", "Run `buddi telegram pair` and open its link on your phone.")
		return
	}
	r.ok("telegram pairing", fmt.Sprintf("%d %s paired (`buddi telegram devices` lists them).", n, plural(n, "device", "devices")))
}

// checkApprovals counts the actions that wait for the owner's decision.
func (r *Report) checkApprovals(ctx context.Context, src *dbsource.Source) {
	var n int
	if err := src.Pool.QueryRow(ctx, `SELECT count(*) FROM core.approvals WHERE state = 'pending'`).Scan(&n); err != nil {
		r.warn("approvals", "the approvals could not be read: "+err.Error()+".", "Run `buddi approvals` to see them.")
		return
	}
	if n > 0 {
		r.warn("approvals", fmt.Sprintf("%d %s for your decision.", n, plural(n, "approval waits", "approvals wait")),
			"See them with `buddi approvals`, then `buddi approvals approve ID` or `buddi approvals reject ID` (or on the dashboard's Home).")
		return
	}
	r.ok("approvals", "none waits for you.")
}
