// Package host is the compiled-in host plugin: host.exec runs a Bash or Python script on the
// host, as the user buddi runs as (seed 004, "Host execution").
//
// This is unrestricted code execution, not a sandbox. What the plugin does guarantee:
//
//   - a clean environment: PATH, HOME and LANG only, fixed when the plugin is built, so no
//     BUDDI_* variable, database URL, key or token of buddi's own reaches the script;
//   - a working directory that is absolute and exists (HOME by default);
//   - its own session and process group, SIGKILL as its parent-death signal, and on a
//     timeout or a cancelled call SIGTERM to the whole group, then SIGKILL after a grace;
//     when the script ends, whatever it left running in its group is killed;
//   - stdout and stderr kept separately, each to its last [MaxStream] bytes, the result
//     saying how much was cut; the exit code in the result.
//
// A process that leaves the group (setsid, a double fork into another session) is out of
// reach of all of the above: staying within the task is model conduct, not a boundary.
//
// # Trust
//
// host.exec is declared gated with effects exec, fs_write, net_read and net_write, and opts
// into reusable approval: its first card offers Allow once, Allow for this conversation and
// Always for this agent, the last two being standing permissions (core/action's Grant) scoped
// to the owner's agent, the tool and this plugin's [Version]. Every command is still a hashed
// action that runs through the executor and the effect ledger; the executor checks the
// permission again before dispatch; a call from a delegated run (plugins.Call.DelegationDepth
// above 0) is never covered, so a delegate always raises a card; a new [Version] voids every
// permission granted for the old one; and a permission is revoked only from the dashboard
// (POST /api/permissions/{id}/revoke) or the terminal (buddi permissions revoke), never by a
// tool.
//
// # Granting it
//
// No shipped agent holds host.exec. The owner gives it to an agent by naming it in the
// agent file's grant:
//
//	tools:
//	  - host.exec
package host
