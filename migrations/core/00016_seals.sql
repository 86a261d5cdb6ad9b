-- Seals (core/seal): a decision and a standing permission each carry an HMAC under the
-- installation's key, kept outside the database, so that whoever can write these tables
-- cannot approve an action or grant a permission. Actions carry theirs in hash (policy 3).

-- +goose Up
ALTER TABLE core.approvals ADD COLUMN decision_seal text NOT NULL DEFAULT '';
ALTER TABLE core.tool_permissions ADD COLUMN seal text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE core.tool_permissions DROP COLUMN seal;
ALTER TABLE core.approvals DROP COLUMN decision_seal;
