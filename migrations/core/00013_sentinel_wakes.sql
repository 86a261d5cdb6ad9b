-- Coalesced sentinel wakes (seed 004, "Sentinels": a burst can be one run), and the findings
-- each wake carried, so mutes are honoured again when it runs and before it delivers.

-- +goose Up
CREATE TABLE core.sentinel_wakes (
    id         bigserial   PRIMARY KEY,
    sentinel   text        NOT NULL,
    findings   jsonb       NOT NULL,
    first_at   timestamptz NOT NULL,
    due_at     timestamptz NOT NULL,
    max_at     timestamptz NOT NULL,
    state      text        NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'woken', 'dropped')),
    run_id     text        NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX sentinel_wakes_waiting_idx ON core.sentinel_wakes (sentinel) WHERE state = 'waiting';
CREATE INDEX sentinel_wakes_run_idx ON core.sentinel_wakes (run_id) WHERE run_id <> '';

-- +goose Down
DROP TABLE core.sentinel_wakes;
