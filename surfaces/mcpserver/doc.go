// Package mcpserver is buddi as an MCP server (seed 004's `buddi mcp`): another MCP client
// talks to the owner's agents and reads what the owner allows, through the official Go SDK's
// server side. It is a surface, a thin adapter: every call it carries is an agent's run like
// any other, through the one registry, tiers, actions and approvals.
//
// Two transports reach the same tools. buddi serve serves streamable HTTP on loopback at
// /mcp behind an API token (Handler); the owner creates, lists and revokes tokens with
// `buddi tokens` (Tokens), and a request without a valid one is a 401 and nothing else.
// `buddi mcp` is a process the client starts that speaks MCP on stdio and forwards to that
// endpoint with the command line's token (Bridge).
//
// The tools: agents_list and approvals_list read; ask_agent sends a message to an agent in a
// conversation of the caller's own (surface "mcp", never the agent's conversation with the
// owner) and waits, with a deadline, for its run to end. The caller is remote (runtime/run's
// Remote): its runs carry no owner request, so the session tier never executes, seed 002's
// remote mode clamps the permission policy, and every write stops at an approval that the
// owner decides on their own surfaces. There is no tool to approve anything. A read-only
// token is offered the read tools only.
package mcpserver
