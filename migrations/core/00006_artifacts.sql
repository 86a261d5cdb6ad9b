-- Artifacts (seed 004, "Data model": core's, so removing a plugin never takes the owner's
-- files): a row per file, the bytes under <data>/artifacts/.

-- +goose Up
CREATE TABLE core.artifacts (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    agent           text        NOT NULL,
    conversation_id uuid,
    run_id          text        NOT NULL DEFAULT '',
    name            text        NOT NULL,
    media_type      text        NOT NULL,
    bytes           bigint      NOT NULL,
    sha256          text        NOT NULL,
    source          text        NOT NULL DEFAULT '',  -- what made it: developer.screenshot of …
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE core.artifacts;
