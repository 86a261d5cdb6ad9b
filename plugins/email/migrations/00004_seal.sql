-- An account decides where its app password is sent, so buddi seals what it says (its
-- address, servers, ports, TLS modes, login and vault entry) with the installation's key
-- when the owner adds it, and checks the seal before every login. A row written straight
-- into the database, or changed there, carries no seal that checks: its password is never
-- sent, and the owner adding the account again re-creates it.

-- +goose Up

ALTER TABLE email.accounts ADD COLUMN seal text NOT NULL DEFAULT '';

-- +goose Down

ALTER TABLE email.accounts DROP COLUMN seal;
