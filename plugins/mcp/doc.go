// Package mcp makes installed plugins out of MCP servers, with the official Go SDK's client.
// An installed plugin is an MCP server (a command buddi starts and speaks to over stdio, or
// a streamable HTTP endpoint on loopback) and the buddi manifest beside it, which gives each
// tool its tier and effects, the hosts the plugin reaches, and the missions and agents it
// suggests. The record of what is installed is plugins.json in buddi's home (Record): it is a
// file, not a table, so `buddi plugins list` answers with the database down.
//
// At serve, each record becomes a plugins.Manifest whose tools call tools/call on the
// plugin's session (Host.Manifests), so a plugin's call goes through the same registry,
// tiers, actions, approvals and effect ledger as a compiled-in tool. Each plugin's process
// is an actor under root/plugins with a restart budget (Host.Start); one that keeps
// crashing is stopped, the owner told in one sentence, and its tools refuse with that
// sentence. A tool whose schema changed since it was accepted, or that the server no longer
// lists, is disabled with a sentence until the owner accepts the new list again.
package mcp
