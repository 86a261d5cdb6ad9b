-- The web plugin's schema (seed 004, "the web plugin"): web.fetches, the audit log of every
-- fetch and search an agent (or the owner, from the terminal) made. It is not a cache: no
-- page body, no search result and no full URL is kept, only the host.

-- +goose Up

CREATE TABLE web.fetches (
    id              bigserial   PRIMARY KEY,
    -- The agent whose call it was, or "owner" for buddi web read.
    agent           text        NOT NULL CHECK (agent <> ''),
    at              timestamptz NOT NULL,
    -- The tool: web.read or web.search.
    tool            text        NOT NULL CHECK (tool IN ('web.read', 'web.search')),
    -- Why, in the caller's own words (web.read's required purpose argument).
    purpose         text        NOT NULL DEFAULT '',
    -- The host asked for, as written when the guard could not read it.
    host            text        NOT NULL DEFAULT '',
    outcome         text        NOT NULL CHECK (outcome IN ('ok', 'blocked', 'error', 'too_large', 'not_text')),
    -- For an outcome other than ok, the sentence the caller was given: for a blocked row,
    -- the place an agent may not reach and why.
    reason          text        NOT NULL DEFAULT '',
    -- The HTTP status of the last answer; NULL when none came.
    status          integer     CHECK (status BETWEEN 100 AND 999),
    -- The body bytes read.
    bytes           bigint      NOT NULL DEFAULT 0 CHECK (bytes >= 0),
    conversation_id text        NOT NULL DEFAULT '',
    run_id          text        NOT NULL DEFAULT ''
);

CREATE INDEX fetches_agent_at ON web.fetches (agent, at DESC);
CREATE INDEX fetches_blocked ON web.fetches (at DESC) WHERE outcome = 'blocked';

-- +goose Down
DROP TABLE web.fetches;
