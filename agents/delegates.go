package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// DelegatesFile is the file beside an agent's file that lists the colleagues it may ask
// through agent.delegate: a JSON list of agent ids or handles, "*" meaning everyone. It sits
// in the agent's own directory, <agents>/<id>/delegates.json, as its private skills do.
const DelegatesFile = "delegates.json"

// The roles whose holder, with no delegates.json, may ask every other agent.
const (
	// RoleFrontDesk is the agent to go to when the owner does not know who to go to.
	RoleFrontDesk = "front-desk"
	// RoleMaker is the agent that makes agents.
	RoleMaker = "maker"
)

// PlatformWriteTools are the tools that make, change or remove agents and skills. No agent
// holding one may be asked by another (delegation would otherwise be a corridor from the
// agent that reads untrusted mail to the one that writes grants).
var PlatformWriteTools = []string{
	"platform.create_agent", "platform.update_agent", "platform.write_skill", "platform.delete_agent",
	"platform.accept_plugin_agent", "platform.accept_plugin_skill",
}

// HoldsPlatformWrites reports whether the agent's grant names any of [PlatformWriteTools].
func (a Agent) HoldsPlatformWrites() bool {
	return slices.ContainsFunc(a.Tools, func(t string) bool { return slices.Contains(PlatformWriteTools, t) })
}

// Delegates is who one agent may ask, as its delegates.json (or its role) says at the moment
// it was read. Read it again at every call: the owner edits the file while buddi runs.
type Delegates struct {
	// Asker is the agent that asks.
	Asker Agent
	// Everyone reports that it may ask every other agent (but one holding a platform write
	// tool): "*" in its file, or a front-desk or maker holder with no file.
	Everyone bool
	// As is the role that gave it everyone ("front-desk" or "maker") when it has no file;
	// empty otherwise.
	As string
	// Allowed are the colleagues it may ask, in the file's order (for Everyone, every other
	// askable agent, by id).
	Allowed []Agent
	// File is the delegates.json that was read, as the owner would open it; empty when the
	// agent has none.
	File string
	// Path is where the owner writes this agent's delegates.json: <agents>/<id>/delegates.json
	// in the owner's directory (the examples are never written).
	Path string
	// Ignored are the entries of the file that name no installed agent.
	Ignored []string
}

// ReadDelegates reads who asker may ask, at this moment: the owner's
// <agents>/<id>/delegates.json first, then, for an example agent, the one shipped beside its
// file. A file that is not a JSON list of strings is an error (nothing is allowed on a
// guess). An entry naming no installed agent is ignored with one log line.
func ReadDelegates(cfg Config, cat *Catalog, asker Agent, log *slog.Logger) (Delegates, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := Delegates{Asker: asker}
	if cfg.AgentsDir != "" {
		d.Path = filepath.Join(cfg.AgentsDir, asker.ID, DelegatesFile)
	}
	data, file, err := readDelegatesFile(cfg, asker, d.Path)
	if err != nil {
		return d, err
	}
	if file == "" { // no file: the roles decide
		for _, role := range []string{RoleFrontDesk, RoleMaker} {
			if asker.HasRole(role) {
				d.Everyone, d.As = true, role
				break
			}
		}
		if d.Everyone {
			d.Allowed = everyoneBut(cat, asker)
		}
		return d, nil
	}
	d.File = file
	var entries []string
	if err := json.Unmarshal(data, &entries); err != nil {
		return d, fmt.Errorf("%s is not a JSON list of agent ids or handles (like [\"developer\", \"@ledger\"] or [\"*\"]): %w", file, err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "*" {
			d.Everyone = true
			continue
		}
		a, ok := lookup(cat, e)
		if !ok {
			d.Ignored = append(d.Ignored, e)
			log.Warn("delegates.json names an agent that is not installed; the entry is ignored", "file", file, "agent", asker.ID, "entry", e)
			continue
		}
		if a.ID == asker.ID || seen[a.ID] {
			continue
		}
		if a.HoldsPlatformWrites() {
			log.Warn("delegates.json names an agent that holds the platform write tools; no agent may hand it work, so the entry is ignored", "file", file, "agent", asker.ID, "entry", e)
			continue
		}
		seen[a.ID] = true
		d.Allowed = append(d.Allowed, a)
	}
	if d.Everyone {
		d.Allowed = everyoneBut(cat, asker)
	}
	return d, nil
}

// readDelegatesFile reads the first delegates.json that exists for asker: the owner's at
// ownerPath, then, for an example agent, the shipped one. file is "" when there is none.
func readDelegatesFile(cfg Config, asker Agent, ownerPath string) (data []byte, file string, err error) {
	if ownerPath != "" {
		data, err := os.ReadFile(ownerPath)
		if err == nil {
			return data, ownerPath, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("read %s: %w", ownerPath, err)
		}
	}
	if asker.Source == SourceExample && cfg.Examples != nil {
		rel := path.Join("agents", asker.ID, DelegatesFile)
		data, err := fs.ReadFile(cfg.Examples, rel)
		label := cfg.ExamplesPath
		if label == "" {
			label = "examples"
		}
		shown := filepath.Join(label, filepath.FromSlash(rel))
		if err == nil {
			return data, shown, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("read %s: %w", shown, err)
		}
	}
	return nil, "", nil
}

// lookup finds an agent by id, else by handle (with or without its @).
func lookup(cat *Catalog, ref string) (Agent, bool) {
	if a, ok := cat.ByID(ref); ok {
		return a, true
	}
	return cat.ByHandle(ref)
}

// everyoneBut is every agent but asker and those holding a platform write tool, by id.
func everyoneBut(cat *Catalog, asker Agent) []Agent {
	var out []Agent
	for _, a := range cat.All() {
		if a.ID != asker.ID && !a.HoldsPlatformWrites() {
			out = append(out, a)
		}
	}
	return out
}

// RefusedError is a delegation the asker's list does not allow; Error is the sentence the
// asking model and the owner read.
type RefusedError struct {
	// Sentence says who the asker may ask, and how the owner changes it.
	Sentence string
}

// Error is the sentence.
func (e *RefusedError) Error() string { return e.Sentence }

// Resolve returns the colleague ref names (an id, or a handle with or without its @) when the
// asker may ask it, or a *[RefusedError] saying who it may ask instead.
func (d Delegates) Resolve(cat *Catalog, ref string) (Agent, error) {
	ref = strings.TrimSpace(ref)
	a, known := lookup(cat, ref)
	if known && a.ID == d.Asker.ID {
		return Agent{}, &RefusedError{Sentence: fmt.Sprintf("%s cannot delegate to itself; answer the question yourself.", d.Asker.Handle)}
	}
	if known && a.HoldsPlatformWrites() {
		return Agent{}, &RefusedError{Sentence: fmt.Sprintf("%s makes and changes agents, so no agent may hand it work; the owner talks to it directly.", a.Handle)}
	}
	if known && slices.ContainsFunc(d.Allowed, func(x Agent) bool { return x.ID == a.ID }) {
		return a, nil
	}
	name := NormalizeHandle(ref)
	if known {
		name = a.Handle
	}
	if !known {
		return Agent{}, &RefusedError{Sentence: fmt.Sprintf("There is no agent %s here; %s", name, d.mayAsk())}
	}
	if len(d.Allowed) == 0 {
		how := fmt.Sprintf("The owner adds it on %s's Team tab", d.Asker.Handle)
		if d.Path != "" {
			how += fmt.Sprintf(", or in %s (a JSON list of agent ids or handles, like [%q])", d.Path, a.ID)
		}
		return Agent{}, &RefusedError{Sentence: fmt.Sprintf("%s may delegate to nobody; %s is not on its list. %s.", d.Asker.Handle, name, how)}
	}
	return Agent{}, &RefusedError{Sentence: fmt.Sprintf("%s may delegate to %s; %s is not on its list. The owner adds it on %s's Team tab.",
		d.Asker.Handle, d.handles(), name, d.Asker.Handle)}
}

// mayAsk says whom the asker may ask, as the end of a sentence.
func (d Delegates) mayAsk() string {
	if len(d.Allowed) == 0 {
		return d.Asker.Handle + " may delegate to nobody."
	}
	return d.Asker.Handle + " may delegate to " + d.handles() + "."
}

// handles lists the allowed colleagues' handles.
func (d Delegates) handles() string {
	hs := make([]string, len(d.Allowed))
	for i, a := range d.Allowed {
		hs[i] = a.Handle
	}
	return strings.Join(hs, ", ")
}

// Describe says in one line whom the asker may ask and why, for its prompt and its Team tab:
// "Can ask: everyone, as the front desk", "Can ask: @dev (developer), @ledger (ledger)".
func (d Delegates) Describe() string {
	switch {
	case d.Everyone && d.As == RoleFrontDesk:
		return "Can ask: everyone, as the front desk"
	case d.Everyone && d.As == RoleMaker:
		return "Can ask: everyone, as the maker"
	case d.Everyone:
		return "Can ask: everyone"
	case len(d.Allowed) == 0:
		return "Can ask: nobody"
	}
	parts := make([]string, len(d.Allowed))
	for i, a := range d.Allowed {
		parts[i] = fmt.Sprintf("%s (%s)", a.Handle, a.ID)
	}
	return "Can ask: " + strings.Join(parts, ", ")
}
