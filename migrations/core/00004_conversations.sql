-- Conversations and their transcripts (seed 004, "Conversations, questions and offered
-- actions"), pending input that joins a working run, held questions, and the call ids that make
-- a resumed or rescued run find the effects it already proposed.

-- +goose Up
CREATE TABLE core.conversations (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    agent            text        NOT NULL,
    surface          text        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_activity_at timestamptz NOT NULL DEFAULT now(),
    -- The characters of transcript so far: one of the two axes its lifetime is judged on.
    chars            bigint      NOT NULL DEFAULT 0,
    -- The run in flight (working or suspended on an approval); NULL when the agent is idle.
    active_run       uuid,
    ended_at         timestamptz,
    ended_reason     text        NOT NULL DEFAULT ''
);
CREATE INDEX conversations_agent_surface_idx ON core.conversations (agent, surface, created_at DESC);

-- One row per transcript entry, in order. kind: user (the owner's text), assistant (text and
-- tool calls), tool (one answer to one call), owner-adds (input that joined a run between
-- steps), marker (the turn above failed and was not answered). Stored scrubbed of secrets.
CREATE TABLE core.messages (
    id              bigserial   PRIMARY KEY,
    conversation_id uuid        NOT NULL REFERENCES core.conversations (id),
    run_id          uuid,
    kind            text        NOT NULL CHECK (kind IN ('user', 'assistant', 'tool', 'owner-adds', 'marker')),
    body            jsonb       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation_idx ON core.messages (conversation_id, id);
-- One answer per call of a run: a rerun never answers twice.
CREATE UNIQUE INDEX messages_tool_answer_idx ON core.messages (run_id, (body->>'call_id')) WHERE kind = 'tool';

-- Input the owner sent while a run worked: pending -> leased -> delivered, or pending ->
-- promoted (it became the next turn).
CREATE TABLE core.pending_input (
    id              bigserial   PRIMARY KEY,
    conversation_id uuid        NOT NULL REFERENCES core.conversations (id),
    text            text        NOT NULL,
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'leased', 'delivered', 'promoted')),
    run_id          uuid,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pending_input_conversation_idx ON core.pending_input (conversation_id, id) WHERE state IN ('pending', 'leased');

-- A held question: a run called conversation.ask; the owner's next message answers it.
CREATE TABLE core.questions (
    conversation_id uuid        PRIMARY KEY REFERENCES core.conversations (id),
    agent           text        NOT NULL,
    run_id          uuid        NOT NULL,
    question        text        NOT NULL,
    asked_at        timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL
);

-- The model's call id of the call an action or a direct attempt came from.
ALTER TABLE core.actions ADD COLUMN call_id text NOT NULL DEFAULT '';
CREATE UNIQUE INDEX actions_run_call_idx ON core.actions (run_id, call_id) WHERE call_id <> '';
ALTER TABLE core.effect_attempts ADD COLUMN run_id text NOT NULL DEFAULT '';
ALTER TABLE core.effect_attempts ADD COLUMN call_id text NOT NULL DEFAULT '';
CREATE INDEX effect_attempts_run_call_idx ON core.effect_attempts (run_id, call_id) WHERE call_id <> '';

-- A run is a span in the event log: its events are found by run id.
CREATE INDEX events_run_idx ON core.events ((payload->>'run_id')) WHERE payload ? 'run_id';

-- +goose Down
DROP INDEX core.events_run_idx;
DROP INDEX core.effect_attempts_run_call_idx;
ALTER TABLE core.effect_attempts DROP COLUMN call_id;
ALTER TABLE core.effect_attempts DROP COLUMN run_id;
DROP INDEX core.actions_run_call_idx;
ALTER TABLE core.actions DROP COLUMN call_id;
DROP TABLE core.questions;
DROP TABLE core.pending_input;
DROP TABLE core.messages;
DROP TABLE core.conversations;
