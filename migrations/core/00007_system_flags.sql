-- System flags (seed 004, "Queue, concurrency, recovery" and "The dead-letter watch"): small
-- pieces of state that must survive a restart, such as an incident already reported.

-- +goose Up
CREATE TABLE core.system_flags (
    key        text        PRIMARY KEY,
    value      jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE core.system_flags;
