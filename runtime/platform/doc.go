// Package platform is the platform.* tool family (seed 004, "Agent-created agents"): agents
// that read the roster and make agents.
//
// The reads are auto: platform.roster (every agent: id, handle, name, roles, how many tools,
// where its file is from), platform.agent (one agent's file and its grant resolved against
// the registry, tool by tool with its tier), platform.tools (the installed tools with their
// tiers) and platform.skills (the shared skills, or one skill's whole file).
//
// The writes are gated: platform.create_agent, platform.update_agent, platform.write_skill,
// platform.delete_agent, and platform.accept_plugin_agent and platform.accept_plugin_skill
// (an agent or skill a plugin proposed, accepted with a sidecar recording the plugin and its
// version). Each is validated in Describe, before any action exists: the file is rendered,
// laid over the owner's directories in memory and the whole catalogue loaded from that
// (agents.Try), so a change that would stop the catalogue from loading is refused, with the
// catalogue's own sentences. A grant naming any platform write tool is refused (the write
// tools cannot be granted through themselves), and the examples are never written. The
// envelope holds the complete resulting file, the resolved grant and, for an update, what a
// widened grant adds; its preconditions are the digests of the files it replaces, so a file
// changed since the card was drawn refuses the action.
//
// Execute writes the files into the owner's directories whole (agents.Apply), then reloads
// the catalogue at once (Deps.Reload, the live catalogue's Reload in buddi serve): a run
// started after the approval sees the new agent, on every surface, without a restart. A
// write after which the catalogue does not load is undone.
//
// The family is runtime-owned like agent.delegate: Manifest gives its declaration (so the
// agent-father's grant loads everywhere), and Bind hands it the running catalogue and
// registry in buddi serve; elsewhere the reads say so and the writes are refused.
package platform
