-- Sentinels (seed 004, "Sentinels"): the ledger their period is read from, their findings with
-- cooldowns and snoozes, the owner's switches and mutes, and the weekly digest's items.

-- +goose Up
CREATE TABLE core.sentinel_runs (
    id          bigserial   PRIMARY KEY,
    sentinel    text        NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    findings    int         NOT NULL DEFAULT 0,
    error       text        NOT NULL DEFAULT ''
);
CREATE INDEX sentinel_runs_latest_idx ON core.sentinel_runs (sentinel, started_at DESC);

CREATE TABLE core.sentinel_findings (
    sentinel      text        NOT NULL,
    key           text        NOT NULL,
    severity      text        NOT NULL CHECK (severity IN ('urgent', 'info')),
    owner_line    text        NOT NULL,
    brief         text        NOT NULL DEFAULT '',
    kind          text        NOT NULL DEFAULT '',
    subject       text        NOT NULL DEFAULT '',
    first_seen    timestamptz NOT NULL,
    last_seen     timestamptz NOT NULL,
    resolved_at   timestamptz,
    fired_at      timestamptz,           -- when it last spoke (its cooldown runs from here)
    fired_severity text       NOT NULL DEFAULT '',
    snoozed_until timestamptz,           -- "Not now"
    not_needed    boolean     NOT NULL DEFAULT false, -- "Not needed": until the fact changes
    PRIMARY KEY (sentinel, key)
);

CREATE TABLE core.sentinel_switches (
    sentinel   text        PRIMARY KEY,
    enabled    boolean     NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE core.sentinel_mutes (
    id         bigserial   PRIMARY KEY,
    kind       text        NOT NULL,
    subject    text        NOT NULL DEFAULT '',  -- '' mutes the whole kind
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (kind, subject)
);

CREATE TABLE core.digest_items (
    id          bigserial   PRIMARY KEY,
    sentinel    text        NOT NULL,
    key         text        NOT NULL,
    owner_line  text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    consumed_at timestamptz
);
CREATE UNIQUE INDEX digest_items_pending_idx ON core.digest_items (sentinel, key) WHERE consumed_at IS NULL;

-- +goose Down
DROP TABLE core.digest_items;
DROP TABLE core.sentinel_mutes;
DROP TABLE core.sentinel_switches;
DROP TABLE core.sentinel_findings;
DROP TABLE core.sentinel_runs;
