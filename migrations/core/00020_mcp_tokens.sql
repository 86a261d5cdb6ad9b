-- buddi mcp (seed 004's "buddi mcp requests"): the API tokens another MCP client presents at
-- /mcp, and which of the agents' conversations each caller holds. A token is stored only as
-- its keyed hash under the installation's seal key (core/seal), with a row seal over its name
-- and read-only flag, so whoever can write this table can neither add a token nor widen one.

-- +goose Up
CREATE TABLE core.mcp_tokens (
    name         text        PRIMARY KEY,
    token_hash   text        NOT NULL UNIQUE,
    read_only    boolean     NOT NULL,
    seal         text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

-- The conversations an MCP caller started: only its caller (a token's name; '' for the
-- command line's `buddi mcp`) may write in one again.
CREATE TABLE core.mcp_conversations (
    conversation_id uuid        PRIMARY KEY REFERENCES core.conversations (id),
    caller          text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE core.mcp_conversations;
DROP TABLE core.mcp_tokens;
