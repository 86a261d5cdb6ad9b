-- Seals (core/seal): a workspace (its directory, the PATH and git captured with it), a mode,
-- a remembered command and the tailnet switch each carry an HMAC under the installation's
-- key, kept outside the database, so whoever can write these tables cannot move an agent's
-- workspace, raise its mode, allow a command or expose its ports. A row whose seal does not
-- check is refused (a mode: ask). Rows written before this migration carry none ('').

-- +goose Up
ALTER TABLE developer.workspaces ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE developer.settings ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE developer.remembered_commands ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE developer.tailnet ADD COLUMN seal text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE developer.tailnet DROP COLUMN seal;
ALTER TABLE developer.remembered_commands DROP COLUMN seal;
ALTER TABLE developer.settings DROP COLUMN seal;
ALTER TABLE developer.workspaces DROP COLUMN seal;
