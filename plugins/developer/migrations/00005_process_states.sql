-- A process row is the durable copy of what its actor in buddi serve knows (supervisor's
-- process host): whether it runs, waits to be started again after a crash, or ended, and how.
-- A process that crashes is started again in place (the same row, a new pid and seal, one
-- more restart); one that ends for good keeps a sentence for the owner in note.

-- +goose Up
ALTER TABLE developer.processes
    ADD COLUMN state text NOT NULL DEFAULT 'running'
        CHECK (state IN ('running', 'restarting', 'exited', 'stopped', 'gave_up')),
    ADD COLUMN restarts integer NOT NULL DEFAULT 0 CHECK (restarts >= 0),
    ADD COLUMN note text NOT NULL DEFAULT '';
UPDATE developer.processes SET state = 'stopped' WHERE stopped_at IS NOT NULL;
ALTER TABLE developer.processes
    ADD CONSTRAINT processes_state_ended CHECK ((stopped_at IS NULL) = (state IN ('running', 'restarting')));

-- +goose Down
ALTER TABLE developer.processes DROP CONSTRAINT processes_state_ended;
ALTER TABLE developer.processes DROP COLUMN note, DROP COLUMN restarts, DROP COLUMN state;
