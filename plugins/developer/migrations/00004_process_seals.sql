-- A process row carries a seal too (core/seal): its pid and start time decide which process
-- group Settings → Developer's Stop, Stop all and the removed-agent sweep signal, so a row
-- written into the table must not aim buddi at the owner's other processes.

-- +goose Up
ALTER TABLE developer.processes ADD COLUMN seal text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE developer.processes DROP COLUMN seal;
