// Package permission is buddi's general permission policy: the engine of seed 002, in Go.
//
// A tool call is decided as a pure function of what the tool declares it does (its
// [Effect] values), the agent's execution [Mode] and the effective [Settings]. The answer
// is a [Decision] with one of three verdicts:
//
//   - allow: the call runs; in the registry this is tier auto.
//   - prompt: a block that a human may lift; in the registry this is tier gated (an
//     approval card). Exactly two blocks are liftable: a shell command that is not in
//     permissions.allow, and a tool that accept-edits mode does not allow by default.
//   - block: a refusal with its reason, never liftable: a permissions.deny match, a mode
//     block, the workspace boundary, or the network policy.
//
// [Evaluate] gives all three; [Decide] reports a prompt as a block whose [BlockKind] is
// liftable. [Decision.Tier] maps a decision onto the registry's tiers.
//
// The decision table, by the call's effects and the mode:
//
//	effects                                     plan                    accept-edits           auto
//	only read                                   allow                   allow                  allow
//	net_read, with read                         allow unless            allow                  allow
//	                                            network_in_plan_mode
//	                                            is false
//	state_write, with read and net_read         block                   allow                  allow
//	fs_write, exec, net_write, or none declared block                   prompt (edit tools     allow
//	                                                                    inside the workspace
//	                                                                    and allowed shell
//	                                                                    commands: allow)
//
// The network policy (allow, allowlist, deny), the permissions.deny rules and the
// workspace confinement apply in every mode, before the table.
//
// Policy is data. It merges from three [Layer] values, lowest priority first: the
// configuration, <data>/settings.json, and the session's settingsOverride ([Merge],
// [LoadEffectiveSettings]). Remote callers (gateway, RPC, MCP) get a mode limited by
// [Remote.Mode], and [SanitizeRemoteAgent] strips the keys that would lift the policy.
//
// Every parser here fails closed: a command(...) rule, a shell command, a URL or a host
// entry that cannot be read with certainty never yields allow.
package permission
