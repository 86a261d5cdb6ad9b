-- A run's events are found by run id and kind, whatever the log's length. The partial index
-- of 00004 served only a query that repeated its predicate, and a planner that preferred to
-- walk the primary key (or every event of a kind) in order did so on every turn's start and
-- every recorded call; this one serves every lookup by run, in id order both ways.

-- +goose Up
CREATE INDEX events_run_kind_idx ON core.events ((payload->>'run_id'), kind, id);
DROP INDEX core.events_run_idx;

-- +goose Down
CREATE INDEX events_run_idx ON core.events ((payload->>'run_id')) WHERE payload ? 'run_id';
DROP INDEX core.events_run_kind_idx;
