-- The weekly recap folds in the digest (seed 004, "Sentinels": info findings): an occurrence
-- remembers the last digest item its run was given, and the items are consumed only once that
-- run delivered, so a failed recap leaves them pending.

-- +goose Up
ALTER TABLE core.occurrences ADD COLUMN digest_upto bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE core.occurrences DROP COLUMN digest_upto;
