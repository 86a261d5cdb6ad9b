-- The memory plugin's schema (seed 004, "Memory"): the owner's preferences, versioned, and
-- the agents' notes, with their provenance. Conversation history (core.messages) and run
-- checkpoints (the event log) are core's and not kept here. Nothing here is ever deleted:
-- a correction supersedes a preference, a forgotten note is marked deleted and kept for the
-- owner's audit; the triggers below refuse anything else.

-- +goose Up

-- pg_trgm is a trusted extension: the role that owns the database may create it. When it
-- already exists (in whatever schema), it is used where it is.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE memory.preferences (
    id              bigserial   PRIMARY KEY,
    -- What the preference is about ("reply language"), and what it says ("English").
    key             text        NOT NULL CHECK (key <> '' AND octet_length(key) <= 100),
    value           text        NOT NULL CHECK (value <> '' AND octet_length(value) <= 1000),
    -- 1 for the first statement of key, one more for each correction.
    revision        integer     NOT NULL CHECK (revision >= 1),
    -- Who wrote this revision: "owner", or the id of the agent that proposed it.
    author          text        NOT NULL CHECK (author <> ''),
    conversation_id text        NOT NULL DEFAULT '',
    run_id          text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    -- Set once, when the next revision is written; the row itself never changes otherwise.
    superseded_at   timestamptz,
    -- Its id is taken before its row is written, so the reference is checked at commit.
    superseded_by   bigint      REFERENCES memory.preferences (id) DEFERRABLE INITIALLY DEFERRED,
    UNIQUE (key, revision),
    CHECK ((superseded_at IS NULL) = (superseded_by IS NULL))
);

-- One current revision per key.
CREATE UNIQUE INDEX preferences_current ON memory.preferences (key) WHERE superseded_at IS NULL;

CREATE TABLE memory.notes (
    id              bigserial   PRIMARY KEY,
    -- The agent that wrote it.
    agent           text        NOT NULL CHECK (agent <> ''),
    body            text        NOT NULL CHECK (body <> '' AND octet_length(body) <= 4096),
    -- private: recalled only by its agent; shared: by every agent, published explicitly.
    scope           text        NOT NULL DEFAULT 'private' CHECK (scope IN ('private', 'shared')),
    conversation_id text        NOT NULL DEFAULT '',
    run_id          text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    -- Past it the note is never recalled; NULL keeps it.
    expires_at      timestamptz CHECK (expires_at > created_at),
    -- Soft delete: who ("owner" or the agent) and when; the row stays for the audit.
    deleted_at      timestamptz,
    deleted_by      text        CHECK (deleted_by <> ''),
    search          tsvector    GENERATED ALWAYS AS (to_tsvector('english', body)) STORED,
    CHECK ((deleted_at IS NULL) = (deleted_by IS NULL))
);

CREATE INDEX notes_agent ON memory.notes (agent, created_at DESC);
CREATE INDEX notes_search ON memory.notes USING gin (search);

-- The trigram index names the operator class in the extension's own schema, wherever an
-- earlier installation put it.
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

-- Preferences are never deleted, and a revision changes only once: when it is superseded.
-- +goose StatementBegin
CREATE FUNCTION memory.preferences_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'memory.preferences keeps every revision: a preference is corrected by a new revision, never deleted';
    END IF;
    IF OLD.superseded_at IS NOT NULL OR NEW.superseded_at IS NULL
       OR (NEW.id, NEW.key, NEW.value, NEW.revision, NEW.author, NEW.conversation_id, NEW.run_id, NEW.created_at)
          IS DISTINCT FROM
          (OLD.id, OLD.key, OLD.value, OLD.revision, OLD.author, OLD.conversation_id, OLD.run_id, OLD.created_at) THEN
        RAISE EXCEPTION 'memory.preferences: a revision is never rewritten; only marking the current one superseded is allowed';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER preferences_kept BEFORE UPDATE OR DELETE ON memory.preferences
    FOR EACH ROW EXECUTE FUNCTION memory.preferences_kept();

-- Notes are never deleted, and a note changes only once: when it is forgotten.
-- +goose StatementBegin
CREATE FUNCTION memory.notes_kept() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER notes_kept BEFORE UPDATE OR DELETE ON memory.notes
    FOR EACH ROW EXECUTE FUNCTION memory.notes_kept();

-- +goose Down
DROP TABLE memory.notes;
DROP TABLE memory.preferences;
DROP FUNCTION memory.notes_kept();
DROP FUNCTION memory.preferences_kept();
