-- Missions and their occurrences (seed 004, "Scheduling and catch-up").

-- +goose Up
CREATE TABLE core.missions (
    id                bigserial   PRIMARY KEY,
    name              text        NOT NULL,
    agent             text        NOT NULL,
    prompt            text        NOT NULL,
    cron              text        NOT NULL,
    timezone          text        NOT NULL,
    misfire           text        NOT NULL CHECK (misfire IN ('replay-all', 'coalesce', 'latest-only', 'skip-after-deadline')),
    deadline          interval    NOT NULL DEFAULT '1 hour',
    schedule_revision int         NOT NULL DEFAULT 1,
    enabled           boolean     NOT NULL DEFAULT true,
    always_deliver    boolean     NOT NULL DEFAULT false,
    source            text        NOT NULL DEFAULT 'owner',
    created_at        timestamptz NOT NULL DEFAULT now(),
    ended_at          timestamptz
);

-- One row per instant owed, idempotent by construction.
CREATE TABLE core.occurrences (
    id                bigserial   PRIMARY KEY,
    mission_id        bigint      NOT NULL REFERENCES core.missions (id),
    schedule_revision int         NOT NULL,
    instant           timestamptz NOT NULL,
    state             text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'delivered', 'silent', 'skipped', 'failed')),
    reason            text        NOT NULL DEFAULT '',
    covers            int         NOT NULL DEFAULT 1,   -- a coalesced occurrence stands for this many instants
    run_id            text        NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (mission_id, schedule_revision, instant)
);

-- The last instant materialised, apart from the last successful run.
CREATE TABLE core.last_materialized (
    mission_id        bigint      PRIMARY KEY REFERENCES core.missions (id),
    schedule_revision int         NOT NULL,
    instant           timestamptz NOT NULL
);

-- +goose Down
DROP TABLE core.last_materialized;
DROP TABLE core.occurrences;
DROP TABLE core.missions;
