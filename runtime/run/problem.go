package run

import (
	"errors"
	"fmt"

	"buddi/runtime/provider"
)

// Problem is a typed reason an agent cannot run now, in a sentence for the owner. It is
// permanent: retrying changes nothing until the owner does.
type Problem struct {
	Kind     string // no-agent, no-account, account-disabled, no-credential, vault-locked, bad-account
	Agent    string // the agent's id
	Sentence string // for the owner: what is wrong and what to do
	Err      error  // the cause, if any
}

// Error says the agent and the kind, and the cause.
func (p *Problem) Error() string {
	if p.Err != nil {
		return fmt.Sprintf("%s: %s: %v", p.Agent, p.Kind, p.Err)
	}
	return p.Agent + ": " + p.Kind
}

// Unwrap returns the cause.
func (p *Problem) Unwrap() error { return p.Err }

// Settled reports whether the owner's answer to the problem is theirs to give (a setup step
// to take, or a turn they stopped): its job has nothing left to do. A turn that crashed in
// buddi's own code is not settled so: an unattended one stays a failed job.
func (p *Problem) Settled() bool { return p.Kind != "crashed" }

// Classify returns the class of err over its whole cause chain: a Problem is permanent, a
// provider error says its own class, anything else is judged by its cause.
func Classify(err error) provider.Class {
	var p *Problem
	if errors.As(err, &p) {
		return provider.Permanent
	}
	return provider.Classify(err)
}

// Sentence is the one sentence the owner gets for err: no tool names, no stack.
func Sentence(err error) string {
	var p *Problem
	if errors.As(err, &p) {
		return p.Sentence
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe.Sentence()
	}
	return "Something went wrong on buddi's side while answering; the details are in the log."
}

// chain lists every wrapped cause of err, bounded in depth, for the log.
func chain(err error) []string {
	var out []string
	var walk func(e error, depth int)
	walk = func(e error, depth int) {
		if e == nil || depth > 12 || len(out) > 32 {
			return
		}
		out = append(out, e.Error())
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c, depth+1)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap(), depth+1)
		}
	}
	walk(err, 0)
	return out
}
