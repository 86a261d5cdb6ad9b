-- The dashboard's sign-in off loopback (seed 004, "Owner and surface authentication"):
-- single-use five-minute tickets from `buddi dashboard`, exchanged for sessions; and the
-- owner's dismissals of failed jobs ("Failed jobs are decisions"). Tokens are stored hashed.

-- +goose Up
CREATE TABLE core.web_tickets (
    token_hash  text        PRIMARY KEY,
    purpose     text        NOT NULL CHECK (purpose IN ('session', 'preview')),
    subject     text        NOT NULL DEFAULT '',   -- a preview's plugin/name
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE core.web_sessions (
    token_hash   text        PRIMARY KEY,
    purpose      text        NOT NULL CHECK (purpose IN ('session', 'preview')),
    subject      text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);

CREATE TABLE core.job_dismissals (
    job_id       bigint      PRIMARY KEY,
    dismissed_at timestamptz NOT NULL DEFAULT now(),
    dismissed_by text        NOT NULL
);

-- +goose Down
DROP TABLE core.job_dismissals;
DROP TABLE core.web_sessions;
DROP TABLE core.web_tickets;
