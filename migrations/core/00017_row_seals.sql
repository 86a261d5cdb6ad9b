-- Seals (core/seal) on the rest of the rows that carry the owner's authority or decide where
-- the owner's secrets go, so that whoever can write these tables cannot pair a stranger's
-- Telegram account, name the tailnet's owner, or point a model account's key at a server of
-- their choice. A row whose seal does not check is treated as absent. Rows written before
-- this migration carry none ('') and are re-created by the owner (pair again, `buddi tailnet
-- owner`, `buddi accounts add`, `buddi agents set`).

-- +goose Up
ALTER TABLE core.surface_identities ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE core.pairing_codes ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE core.surface_updates ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE core.system_flags ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE core.provider_accounts ADD COLUMN seal text NOT NULL DEFAULT '';
ALTER TABLE core.agent_provider_accounts ADD COLUMN seal text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE core.agent_provider_accounts DROP COLUMN seal;
ALTER TABLE core.provider_accounts DROP COLUMN seal;
ALTER TABLE core.system_flags DROP COLUMN seal;
ALTER TABLE core.surface_updates DROP COLUMN seal;
ALTER TABLE core.pairing_codes DROP COLUMN seal;
ALTER TABLE core.surface_identities DROP COLUMN seal;
