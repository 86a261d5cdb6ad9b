-- Sources (seed 004, "Drop-in tools and skills"): the plugins' pollers. core.source_runs is
-- the ledger their period is read from (a machine that slept finds a source due once, not once
-- per missed period); core.source_enqueues makes enqueueRun idempotent on (source, dedup key),
-- so a poll that crashed between its enqueue and its own commit starts nothing twice.

-- +goose Up
CREATE TABLE core.source_runs (
    id          bigserial   PRIMARY KEY,
    source      text        NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    state       text        NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'ok', 'failed')),
    error       text        NOT NULL DEFAULT '', -- one sentence: why the poll failed
    enqueued    int         NOT NULL DEFAULT 0,  -- runs this poll started
    next_due    timestamptz                      -- when the source was next due, as it finished
);
CREATE INDEX source_runs_latest_idx ON core.source_runs (source, id DESC);

CREATE TABLE core.source_enqueues (
    source     text        NOT NULL,
    dedup_key  text        NOT NULL,
    agent      text        NOT NULL,
    run_id     text        NOT NULL,
    source_run bigint      REFERENCES core.source_runs (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, dedup_key)
);

-- +goose Down
DROP TABLE core.source_enqueues;
DROP TABLE core.source_runs;
