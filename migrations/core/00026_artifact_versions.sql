-- Artifact versions (seed 004, "Data model": artifacts are core's; "Drafts are artifacts … an
-- approval references a version and the preview is what ships"). A row is one version, and a
-- version never changes: a new one is a new row in the same lineage, numbered one past the
-- latest, naming the version it follows. Reading by id gives that exact version; the latest of
-- a lineage is its highest version.

-- +goose Up
ALTER TABLE core.artifacts
    ADD COLUMN lineage  uuid,
    ADD COLUMN version  int  NOT NULL DEFAULT 1 CHECK (version >= 1),
    ADD COLUMN previous uuid REFERENCES core.artifacts (id);

UPDATE core.artifacts SET lineage = id;

ALTER TABLE core.artifacts
    ALTER COLUMN lineage SET NOT NULL,
    ADD CONSTRAINT artifacts_first_has_no_previous CHECK ((version = 1) = (previous IS NULL));

-- Two writers of the same next version: one of them fails here instead of forking the lineage.
CREATE UNIQUE INDEX artifacts_lineage_version_idx ON core.artifacts (lineage, version);
CREATE INDEX artifacts_agent_idx ON core.artifacts (agent, created_at DESC);
CREATE INDEX artifacts_conversation_idx ON core.artifacts (conversation_id) WHERE conversation_id IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION core.artifacts_version_rules() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- A first version is its own lineage.
        NEW.lineage := COALESCE(NEW.lineage, NEW.id);
        RETURN NEW;
    END IF;
    -- Every column: its name, conversation, run, source and time are part of the version too.
    IF NEW IS DISTINCT FROM OLD THEN
        RAISE EXCEPTION 'artifact % is a version and never changes: write a new version instead', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER artifacts_version_rules
    BEFORE INSERT OR UPDATE ON core.artifacts
    FOR EACH ROW EXECUTE FUNCTION core.artifacts_version_rules();

-- +goose Down
DROP TRIGGER artifacts_version_rules ON core.artifacts;
DROP FUNCTION core.artifacts_version_rules();
DROP INDEX core.artifacts_conversation_idx;
DROP INDEX core.artifacts_agent_idx;
DROP INDEX core.artifacts_lineage_version_idx;
ALTER TABLE core.artifacts
    DROP CONSTRAINT artifacts_first_has_no_previous,
    DROP COLUMN previous,
    DROP COLUMN version,
    DROP COLUMN lineage;
