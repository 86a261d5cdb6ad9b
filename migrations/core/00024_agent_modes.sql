-- Seed 002's execution modes for every agent (plan < accept-edits < auto), set by the owner
-- on Settings → Agents, on Telegram's /agents or with `buddi agents mode`, and read by the
-- executor's permission policy at every call. An agent without a row is in the default mode,
-- auto (the tools' own tiers and approvals decide). Each row carries a seal over the agent,
-- the mode and when it was set, under the installation's key (core/seal): a row that does not
-- check is read as plan, the strictest, so writing this table cannot raise a mode.

-- +goose Up
CREATE TABLE core.agent_modes (
    agent      text        PRIMARY KEY,
    mode       text        NOT NULL CHECK (mode IN ('plan', 'accept-edits', 'auto')),
    updated_at timestamptz NOT NULL,
    updated_by text        NOT NULL,
    seal       text        NOT NULL
);

-- +goose Down
DROP TABLE core.agent_modes;
