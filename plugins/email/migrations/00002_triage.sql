-- Triage: each message recorded asks for one triage run, and the asking is its own record
-- (seed 004: "Triage state, drafts and send attempts are separate records"). The row is
-- written in the transaction that records the message and moves the cursor, so a message
-- is never read without its triage being owed; the source then starts the run (once per
-- message: its dedup key) and marks the row enqueued.

-- +goose Up

CREATE TABLE email.triage (
    message     bigint      PRIMARY KEY REFERENCES email.messages (id) ON DELETE CASCADE,
    account_id  bigint      NOT NULL REFERENCES email.accounts (id) ON DELETE CASCADE,
    -- pending: owed a run; enqueued: its run was started (core.source_enqueues holds which).
    state       text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'enqueued')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    enqueued_at timestamptz
);

CREATE INDEX triage_pending ON email.triage (message) WHERE state = 'pending';

-- +goose Down

DROP TABLE email.triage;
