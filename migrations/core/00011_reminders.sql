-- Reminders (seed 004, "Reminders and agent-proposed schedules"): a single instant an agent
-- promised to look at.

-- +goose Up
CREATE TABLE core.reminders (
    id              bigserial   PRIMARY KEY,
    agent           text        NOT NULL,
    conversation_id uuid,
    note            text        NOT NULL,
    due_at          timestamptz NOT NULL,
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'fired', 'expired', 'cancelled')),
    run_id          text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reminders_due_idx ON core.reminders (due_at) WHERE state = 'pending';

-- +goose Down
DROP TABLE core.reminders;
