-- Missions that stop themselves (seed 004): an agent's proposal carries its own end (stop_when
-- in its words, ends_on a last day); quiet_runs counts silent runs in a row for the "Still
-- useful?" question.

-- +goose Up
ALTER TABLE core.missions ADD COLUMN stop_when text NOT NULL DEFAULT '';
ALTER TABLE core.missions ADD COLUMN ends_on timestamptz;
ALTER TABLE core.missions ADD COLUMN quiet_runs int NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE core.missions DROP COLUMN quiet_runs;
ALTER TABLE core.missions DROP COLUMN ends_on;
ALTER TABLE core.missions DROP COLUMN stop_when;
