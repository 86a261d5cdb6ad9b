package permission

import (
	"fmt"
	"strings"
)

// Call is one tool call as the policy sees it.
type Call struct {
	// Tool is the tool's name, used in reasons.
	Tool string
	// Effects are what the tool declares this call does. None declared is decided as
	// the strictest row of the table (as fs_write, exec or net_write).
	Effects []Effect
	// Args are the call's decoded JSON arguments. The policy reads "url" (a string) for
	// the network allowlist and, for a Shell call, "command" (a string).
	Args map[string]any
	// Hosts are the hosts the tool declares it reaches (its plugin manifest's network lines).
	// An allowlist admits a call with a network effect only when each of them is in
	// networkAllowHosts, as well as its url argument's host; a call with Hosts needs no url.
	Hosts []string
	// Shell marks a tool that runs Args["command"] through a shell (the seed's bash). It
	// implies EffectExec. permissions.deny and permissions.allow apply to its command.
	Shell bool
	// Edit marks a file-edit tool (the seed's write and edit). It implies EffectFSWrite.
	// Accept-edits mode allows it when every path in Paths is inside the workspace and it
	// declares no effect besides read and fs_write.
	Edit bool
	// Paths are the absolute filesystem paths the call touches. Unless
	// allowNonWorkspaceAccess is true, each must be inside the agent's workspacePaths or
	// the trustedWorkspaces, after symbolic links are followed. A relative path is never
	// inside.
	Paths []string
}

// name is the tool's name for a reason sentence.
func (c Call) name() string {
	if c.Tool == "" {
		return "the tool"
	}
	return c.Tool
}

// effects returns the declared effects with those that Shell and Edit imply.
func (c Call) effects() []Effect {
	out := append([]Effect(nil), c.Effects...)
	if c.Shell {
		out = append(out, EffectExec)
	}
	if c.Edit {
		out = append(out, EffectFSWrite)
	}
	return out
}

// Decide gives the decision for one call as allow or block (the seed's decide/4): the
// same as Evaluate, with a prompt reported as a block whose kind is liftable. The result
// depends on nothing but its arguments and, for Paths, the filesystem's links.
func Decide(c Call, a Agent, s Settings) Decision {
	d := Evaluate(c, a, s)
	if d.Verdict == VerdictPrompt {
		d.Verdict = VerdictBlock
	}
	return d
}

// Evaluate gives the decision for one call with three answers (the seed's evaluate/4):
// allow, prompt for a block a human may lift, or block. s is the effective policy (see
// LoadEffectiveSettings). The rules apply in this order, and the first that refuses
// decides:
//
//  1. For a Shell call, permissions.deny, in every mode: a matching rule, a rule that
//     cannot be read, or a command that cannot be checked against the rules blocks it.
//  2. Unless allowNonWorkspaceAccess, every path in Paths must be inside the workspace.
//  3. For a call with a network effect, the network policy.
//  4. The mode's row of the decision table (see the package documentation). In plan mode
//     a refusal is a block; in accept-edits mode it is a prompt.
//
// The mode is a.ExecutionMode lowered to a.MaxExecutionMode; a value that is not a mode
// is decided as plan. A mode block's reason ends with a.ModeNote. With
// a.DangerouslySkipPermissions a prompt becomes allow; blocks stay. The answer never
// loosens as the mode falls.
func Evaluate(c Call, a Agent, s Settings) Decision {
	d := evaluate(c, a, s)
	if d.Block == BlockMode && a.ModeNote != "" {
		d.Reason = strings.TrimSuffix(d.Reason, ".") + "; " + a.ModeNote + "."
	}
	if a.DangerouslySkipPermissions && d.Verdict == VerdictPrompt {
		return allowed("dangerouslySkipPermissions approves " + c.name() + " without asking.")
	}
	return d
}

// evaluate is Evaluate before dangerouslySkipPermissions.
func evaluate(c Call, a Agent, s Settings) Decision {
	mode := effectiveMode(a)
	effects := c.effects()
	cmd, cmdIsString := "", false
	if c.Shell {
		cmd, cmdIsString = c.Args["command"].(string)
		if d, ok := checkDeny(c, cmd, cmdIsString, s.Deny); !ok {
			return d
		}
	}

	roots := append(append([]string(nil), a.WorkspacePaths...), s.TrustedWorkspaces...)
	if !s.AllowNonWorkspaceAccess {
		for _, p := range c.Paths {
			if in, err := withinAny(p, roots); !in {
				why := "is outside the workspace"
				if err != nil {
					why = "cannot be checked against the workspace"
				}
				return blocked(BlockWorkspace, fmt.Sprintf("The path %s %s; file tools may only touch workspacePaths and trustedWorkspaces while allowNonWorkspaceAccess is false.", quote(p), why))
			}
		}
	}

	if hasNetwork(effects) {
		if d, ok := checkNetwork(c, s); !ok {
			return d
		}
	}

	cls := classify(effects)
	switch cls {
	case classRead:
		return allowed(fmt.Sprintf("%s only reads, which %s mode allows.", c.name(), mode))
	case classNetRead:
		if mode == ModePlan && !s.NetworkInPlanMode {
			return blocked(BlockNetwork, fmt.Sprintf("%s reads from the network, which plan mode refuses while network_in_plan_mode is false.", c.name()))
		}
		return allowed(fmt.Sprintf("%s reads, from the network too, which %s mode allows.", c.name(), mode))
	case classStateWrite:
		if mode == ModePlan {
			return blocked(BlockMode, fmt.Sprintf("%s changes state, and plan mode allows only reads.", c.name()))
		}
		return allowed(fmt.Sprintf("%s changes state, which %s mode allows.", c.name(), mode))
	}

	// classWrite: fs_write, exec, net_write, an unknown effect, or nothing declared.
	switch mode {
	case ModeAuto:
		return allowed(fmt.Sprintf("Auto mode allows %s.", c.name()))
	case ModeAcceptEdits:
		return acceptEditsWrite(c, cmd, cmdIsString, effects, roots, s)
	}
	return blocked(BlockMode, fmt.Sprintf("%s %s, and plan mode allows only reads.", c.name(), risk(effects, c.Shell)))
}

// acceptEditsWrite decides, in accept-edits mode, a call that the mode does not allow by
// default: the edit tools inside the workspace and the allowed shell commands are
// excepted; everything else asks.
func acceptEditsWrite(c Call, cmd string, cmdIsString bool, effects []Effect, roots []string, s Settings) Decision {
	if c.Shell {
		if cmdIsString {
			if rule, ok := allowingRule(cmd, s.Allow); ok {
				return allowed(fmt.Sprintf("permissions.allow entry %s matches the command, which accept-edits mode allows.", quote(rule)))
			}
		}
		return prompted(BlockCommandNotAllowed,
			fmt.Sprintf("The command %s is not in permissions.allow, so accept-edits mode asks first.", commandText(c)),
			risk(effects, true))
	}
	if c.Edit && subsetOf(effects, EffectRead, EffectFSWrite) && len(c.Paths) > 0 {
		inside := true
		for _, p := range c.Paths {
			if in, _ := withinAny(p, roots); !in {
				inside = false
				break
			}
		}
		if inside {
			return allowed(fmt.Sprintf("%s edits files inside the workspace, which accept-edits mode allows.", c.name()))
		}
	}
	return prompted(BlockNotAllowedByDefault,
		fmt.Sprintf("Accept-edits mode does not allow %s by default (it %s), so it asks first.", c.name(), risk(effects, false)),
		risk(effects, false))
}

// checkDeny applies permissions.deny to a Shell call. ok is true when the call is clear.
func checkDeny(c Call, cmd string, cmdIsString bool, deny []string) (Decision, bool) {
	if len(deny) == 0 {
		return Decision{}, true
	}
	if !cmdIsString {
		return blocked(BlockDeny, c.name()+" has no command string that could be checked against permissions.deny, so it is blocked."), false
	}
	outcome, rule := checkDenied(cmd, deny)
	switch outcome {
	case denyMatched:
		return blocked(BlockDeny, fmt.Sprintf("permissions.deny entry %s matches the command %s; it is blocked in every mode.", quote(rule), quote(cmd))), false
	case denyBadRule:
		return blocked(BlockDeny, fmt.Sprintf("permissions.deny entry %s cannot be read, so no shell command runs until it is fixed.", quote(rule))), false
	case denyUnsure:
		return blocked(BlockDeny, fmt.Sprintf("The command %s uses shell syntax that cannot be checked against permissions.deny ($( ), ${ }, backticks, braces, or a variable or glob where a program name goes), so it is blocked; write it as plain words.", quote(cmd))), false
	}
	return Decision{}, true
}

// commandText renders a Shell call's command for a reason.
func commandText(c Call) string {
	if s, ok := c.Args["command"].(string); ok {
		return quote(s)
	}
	return "of " + c.name() + " (not a string)"
}

// withinAny reports whether p is inside one of roots. err is the last failure to
// resolve, when no root contains p.
func withinAny(p string, roots []string) (bool, error) {
	var last error
	for _, r := range roots {
		in, err := Within(p, r)
		if err != nil {
			last = err
			continue
		}
		if in {
			return true, nil
		}
	}
	return false, last
}
