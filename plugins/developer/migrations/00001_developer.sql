-- The developer plugin's schema (seed 000 §11, issue 5 item 1): who works where, in which
-- mode, which commands the owner allowed on a card, and the long-lived processes. File
-- contents are never stored here.

-- +goose Up

-- One workspace per agent (§2): an absolute directory, with its links resolved when it was
-- granted, so that retargeting a link later does not move the workspace.
CREATE TABLE developer.workspaces (
    agent     text        PRIMARY KEY CHECK (agent <> ''),
    directory text        NOT NULL CHECK (directory LIKE '/%'),
    set_at    timestamptz NOT NULL,
    -- Who set it: "approval" (an approved developer.workspace card) or "owner:<surface>".
    set_by    text        NOT NULL CHECK (set_by <> ''),
    -- The PATH captured when it was set (commands are resolved on it), and the git found there.
    path      text        NOT NULL DEFAULT '',
    git       text        NOT NULL DEFAULT ''
);

-- The mode of each agent (§3), set by the owner only. No row means the default, run. It is
-- kept apart from the workspace so that moving the workspace keeps the owner's choice.
CREATE TABLE developer.settings (
    agent      text        PRIMARY KEY CHECK (agent <> ''),
    mode       text        NOT NULL DEFAULT 'run' CHECK (mode IN ('ask', 'edit', 'run')),
    updated_at timestamptz NOT NULL
);

-- "Commands you allowed" (§3, "Remembering an answer"; §8): bound to the agent and the
-- directory, exact or by prefix, revoked rather than deleted so the list keeps its history.
CREATE TABLE developer.remembered_commands (
    id         bigserial   PRIMARY KEY,
    agent      text        NOT NULL CHECK (agent <> ''),
    workspace  text        NOT NULL CHECK (workspace LIKE '/%'),
    argv       jsonb       NOT NULL CHECK (jsonb_typeof(argv) = 'array' AND jsonb_array_length(argv) > 0),
    prefix     boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CHECK (revoked_at IS NULL OR revoked_at >= created_at)
);

-- The same allowance twice is one row while it stands.
CREATE UNIQUE INDEX remembered_commands_live
    ON developer.remembered_commands (agent, workspace, argv, prefix)
    WHERE revoked_at IS NULL;

-- The long-lived processes an agent started (§4 developer.start): identified by (pid,
-- start_time) so a recycled pid is a stale row, never a signal sent to a stranger.
CREATE TABLE developer.processes (
    id         bigserial   PRIMARY KEY,
    agent      text        NOT NULL CHECK (agent <> ''),
    name       text        NOT NULL CHECK (name <> ''),
    pid        integer     NOT NULL CHECK (pid > 0),
    -- When the operating system says the pid started, as it says it (Linux: clock ticks
    -- since boot, field 22 of /proc/<pid>/stat).
    start_time bigint      NOT NULL,
    -- The kernel's boot id when it started: after a reboot the row is stale, whatever the pid.
    boot       text        NOT NULL DEFAULT '',
    argv       jsonb       NOT NULL CHECK (jsonb_typeof(argv) = 'array' AND jsonb_array_length(argv) > 0),
    cwd        text        NOT NULL CHECK (cwd LIKE '/%'),
    port       integer     CHECK (port BETWEEN 1 AND 65535),
    log_path   text        NOT NULL CHECK (log_path LIKE '/%'),
    started_at timestamptz NOT NULL,
    stopped_at timestamptz
);

-- "A process name belongs to one agent at a time across the installation."
CREATE UNIQUE INDEX processes_live_name ON developer.processes (name) WHERE stopped_at IS NULL;
CREATE INDEX processes_live_agent ON developer.processes (agent) WHERE stopped_at IS NULL;

-- +goose Down
DROP TABLE developer.processes;
DROP TABLE developer.remembered_commands;
DROP TABLE developer.settings;
DROP TABLE developer.workspaces;
