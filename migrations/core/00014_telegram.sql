-- Telegram (seed 004, "Owner and surface authentication" and "Offline contract"): updates are
-- persisted before the polling offset advances; paired identities by numeric user id and
-- private chat id; one-time pairing codes (hashed); the active agent per chat; the messages a
-- run streams into.

-- +goose Up
CREATE TABLE core.surface_updates (
    surface     text        NOT NULL,
    update_id   bigint      NOT NULL,
    payload     jsonb       NOT NULL,
    state       text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'handled', 'ignored')),
    note        text        NOT NULL DEFAULT '',
    received_at timestamptz NOT NULL DEFAULT now(),
    handled_at  timestamptz,
    PRIMARY KEY (surface, update_id)
);
CREATE INDEX surface_updates_pending_idx ON core.surface_updates (surface, update_id) WHERE state = 'pending';

CREATE TABLE core.surface_cursors (
    surface     text        PRIMARY KEY,
    next_offset bigint      NOT NULL,
    polled_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE core.surface_identities (
    id         bigserial   PRIMARY KEY,
    surface    text        NOT NULL,
    user_id    bigint      NOT NULL,
    chat_id    bigint      NOT NULL,
    name       text        NOT NULL DEFAULT '',
    paired_at  timestamptz NOT NULL DEFAULT now(),
    unpaired_at timestamptz
);
CREATE UNIQUE INDEX surface_identities_live_idx ON core.surface_identities (surface, user_id, chat_id) WHERE unpaired_at IS NULL;

CREATE TABLE core.pairing_codes (
    code_hash  text        PRIMARY KEY,
    surface    text        NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);

CREATE TABLE core.surface_active_agent (
    surface text   NOT NULL,
    chat_id bigint NOT NULL,
    agent   text   NOT NULL,
    PRIMARY KEY (surface, chat_id)
);

-- +goose Down
DROP TABLE core.surface_active_agent;
DROP TABLE core.pairing_codes;
DROP TABLE core.surface_identities;
DROP TABLE core.surface_cursors;
DROP TABLE core.surface_updates;
