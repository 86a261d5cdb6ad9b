-- Recall ignores case in every script. buddi's cluster runs with the C locale, where
-- PostgreSQL lowers only ASCII letters (and pg_trgm sees no other letter at all), so
-- "встреча" never found "Встреча". Each note now keeps its text lowered by buddi
-- (Unicode's lower case, which does not depend on the locale) in folded, and the full-text
-- and trigram indexes are built over it; body stays the note as it was written.

-- +goose Up

ALTER TABLE memory.notes ADD COLUMN folded text;

-- The notes written before: lowered by ICU where the server has it, else as the database
-- lowers them. The trigger that keeps notes unchanged is off for this one backfill.
ALTER TABLE memory.notes DISABLE TRIGGER notes_kept;
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
        EXECUTE 'UPDATE memory.notes SET folded = lower(body COLLATE "und-x-icu")';
    ELSE
        UPDATE memory.notes SET folded = lower(body);
    END IF;
END
$$;
-- +goose StatementEnd
ALTER TABLE memory.notes ENABLE TRIGGER notes_kept;

ALTER TABLE memory.notes ALTER COLUMN folded SET NOT NULL,
    ADD CONSTRAINT notes_folded CHECK (folded <> '' AND octet_length(folded) <= 4 * 4096);

ALTER TABLE memory.notes DROP COLUMN search;
ALTER TABLE memory.notes ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('english', folded)) STORED;
CREATE INDEX notes_search ON memory.notes USING gin (search);

DROP INDEX memory.notes_trigram;
-- +goose StatementBegin
DO $$
DECLARE s text;
BEGIN
    SELECT n.nspname INTO STRICT s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX notes_trigram ON memory.notes USING gin (folded %I.gin_trgm_ops)', s);
END
$$;
-- +goose StatementEnd

-- folded is part of the note: it changes no more than its body does.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION memory.notes_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'memory.notes keeps every note for the audit: forget one by marking it deleted';
    END IF;
    IF OLD.deleted_at IS NOT NULL OR NEW.deleted_at IS NULL
       OR (NEW.id, NEW.agent, NEW.body, NEW.folded, NEW.scope, NEW.conversation_id, NEW.run_id, NEW.created_at, NEW.expires_at)
          IS DISTINCT FROM
          (OLD.id, OLD.agent, OLD.body, OLD.folded, OLD.scope, OLD.conversation_id, OLD.run_id, OLD.created_at, OLD.expires_at) THEN
        RAISE EXCEPTION 'memory.notes: a note is never rewritten; only marking it deleted is allowed';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose Down

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION memory.notes_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'memory.notes keeps every note for the audit: forget one by marking it deleted';
    END IF;
    IF OLD.deleted_at IS NOT NULL OR NEW.deleted_at IS NULL
       OR (NEW.id, NEW.agent, NEW.body, NEW.scope, NEW.conversation_id, NEW.run_id, NEW.created_at, NEW.expires_at)
          IS DISTINCT FROM
          (OLD.id, OLD.agent, OLD.body, OLD.scope, OLD.conversation_id, OLD.run_id, OLD.created_at, OLD.expires_at) THEN
        RAISE EXCEPTION 'memory.notes: a note is never rewritten; only marking it deleted is allowed';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

DROP INDEX memory.notes_trigram;
-- +goose StatementBegin
DO $$
DECLARE s text;
BEGIN
    SELECT n.nspname INTO STRICT s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX notes_trigram ON memory.notes USING gin (body %I.gin_trgm_ops)', s);
END
$$;
-- +goose StatementEnd

ALTER TABLE memory.notes DROP COLUMN search;
ALTER TABLE memory.notes ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED;
CREATE INDEX notes_search ON memory.notes USING gin (search);
ALTER TABLE memory.notes DROP COLUMN folded;
