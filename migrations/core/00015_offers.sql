-- Offered actions (seed 004, "Conversations, questions and offered actions"): a shortcut for
-- typing a sentence, not a capability. Taking one is one atomic claim across surfaces.

-- +goose Up
CREATE TABLE core.offers (
    id              bigserial   PRIMARY KEY,
    conversation_id uuid        NOT NULL REFERENCES core.conversations (id),
    agent           text        NOT NULL,
    run_id          text        NOT NULL,
    label           text        NOT NULL,
    prompt          text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    taken_at        timestamptz,
    taken_by        text        NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE core.offers;
