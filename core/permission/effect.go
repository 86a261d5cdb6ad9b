package permission

import (
	"strconv"

	"buddi/plugins"
)

// Effect is one thing a tool call does, as the tool declares it (the plugin contract's
// type). The decision is made from the declared effects, never from the tool's name.
type Effect = plugins.Effect

// The effects a tool may declare.
const (
	EffectRead       = plugins.EffectRead
	EffectFSWrite    = plugins.EffectFSWrite
	EffectExec       = plugins.EffectExec
	EffectNetRead    = plugins.EffectNetRead
	EffectNetWrite   = plugins.EffectNetWrite
	EffectStateWrite = plugins.EffectStateWrite
)

// AllEffects returns every effect a tool may declare, in a fixed order.
func AllEffects() []Effect { return plugins.AllEffects() }

// class is a row of the seed's decision table.
type class int

const (
	// classRead: only read.
	classRead class = iota
	// classNetRead: net_read, with or without read.
	classNetRead
	// classStateWrite: state_write, with or without read and net_read.
	classStateWrite
	// classWrite: fs_write, exec, net_write, an unknown effect, or no declared effects.
	classWrite
)

// String names the row as the seed's table does.
func (c class) String() string {
	switch c {
	case classRead:
		return "only read"
	case classNetRead:
		return "net_read"
	case classStateWrite:
		return "state_write"
	default:
		return "fs_write, exec, net_write or undeclared"
	}
}

// classify finds the row of the decision table for a set of declared effects.
func classify(effects []Effect) class {
	if len(effects) == 0 {
		return classWrite
	}
	c := classRead
	for _, e := range effects {
		switch e {
		case EffectRead:
		case EffectNetRead:
			c = max(c, classNetRead)
		case EffectStateWrite:
			c = max(c, classStateWrite)
		default: // fs_write, exec, net_write, or an effect this package does not know
			return classWrite
		}
	}
	return c
}

// hasNetwork reports whether any effect reaches the network.
func hasNetwork(effects []Effect) bool {
	for _, e := range effects {
		if e.Network() {
			return true
		}
	}
	return false
}

// subsetOf reports whether every effect is one of allowed.
func subsetOf(effects []Effect, allowed ...Effect) bool {
	for _, e := range effects {
		ok := false
		for _, a := range allowed {
			if e == a {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// risk names, in a few words for an approval card, the riskiest thing the effects do.
func risk(effects []Effect, shell bool) string {
	if shell {
		return "runs a shell command"
	}
	if len(effects) == 0 {
		return "has no declared effects"
	}
	has := func(want Effect) bool {
		for _, e := range effects {
			if e == want {
				return true
			}
		}
		return false
	}
	switch {
	case has(EffectExec):
		return "runs a program"
	case has(EffectNetWrite):
		return "sends data over the network"
	case has(EffectFSWrite):
		return "writes files"
	}
	for _, e := range effects {
		if !e.Valid() {
			return "declares an unknown effect " + quote(string(e))
		}
	}
	switch {
	case has(EffectStateWrite):
		return "changes buddi's state"
	case has(EffectNetRead):
		return "reads from the network"
	}
	return "reads data"
}

// quote renders s in Go's double-quoted form for a reason sentence, so control
// characters in a model's text cannot break the sentence.
func quote(s string) string {
	return strconv.Quote(s)
}
