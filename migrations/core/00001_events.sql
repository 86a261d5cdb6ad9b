-- The event log: committed facts, in append order. Nothing may change or remove a row.

-- +goose Up
CREATE TABLE core.events (
    id              bigserial PRIMARY KEY,
    kind            text        NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$'),
    conversation_id uuid,
    payload         jsonb       NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(payload) = 'object'),
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX events_kind_id_idx ON core.events (kind, id);
CREATE INDEX events_conversation_id_idx ON core.events (conversation_id, id) WHERE conversation_id IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION core.events_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'core.events is append-only: % is refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE ON core.events
    FOR EACH ROW EXECUTE FUNCTION core.events_refuse_change();

CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON core.events
    FOR EACH STATEMENT EXECUTE FUNCTION core.events_refuse_change();

-- +goose Down
DROP TABLE core.events;
DROP FUNCTION core.events_refuse_change();
