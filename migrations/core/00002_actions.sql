-- Actions and approvals (seed 004, "Actions and approvals"), the effect ledger ("Effectful
-- side effects") and standing permissions.

-- +goose Up
CREATE TABLE core.actions (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    tool            text        NOT NULL,
    tool_version    text        NOT NULL,
    agent           text        NOT NULL,
    conversation_id uuid,
    run_id          text        NOT NULL DEFAULT '',
    delegation_depth int        NOT NULL DEFAULT 0,
    -- The canonical JSON text, byte for byte as hashed (jsonb would respell it).
    args            text        NOT NULL CHECK (args::jsonb IS NOT NULL),
    envelope        jsonb       NOT NULL,
    policy_version  int         NOT NULL,
    hash            text        NOT NULL,
    expires_at      timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose StatementBegin
CREATE FUNCTION core.actions_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'core.actions is immutable: % is refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER actions_immutable
    BEFORE UPDATE OR DELETE ON core.actions
    FOR EACH ROW EXECUTE FUNCTION core.actions_refuse_change();

CREATE TABLE core.approvals (
    action_id   uuid        PRIMARY KEY REFERENCES core.actions (id),
    state       text        NOT NULL DEFAULT 'pending' CHECK (state IN
                    ('pending', 'approved', 'executing', 'succeeded', 'failed', 'unknown', 'rejected', 'expired', 'refused')),
    decided_by  text,
    decided_at  timestamptz,
    -- The owner's picks among the action's declared choices: {"from": "me@example.com"}.
    picks       jsonb       NOT NULL DEFAULT '{}'::jsonb,
    reason      text        NOT NULL DEFAULT '',
    result      jsonb,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX approvals_open_idx ON core.approvals (state) WHERE state IN ('pending', 'approved', 'executing', 'unknown');

CREATE TABLE core.effect_attempts (
    id          bigserial   PRIMARY KEY,
    action_id   uuid        REFERENCES core.actions (id),
    tool        text        NOT NULL,
    envelope    jsonb       NOT NULL,
    hash        text        NOT NULL,
    state       text        NOT NULL DEFAULT 'dispatched' CHECK (state IN ('dispatched', 'succeeded', 'failed', 'unknown')),
    error       text        NOT NULL DEFAULT '',
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

-- An action is dispatched at most once: a second executor racing the first finds the row.
CREATE UNIQUE INDEX effect_attempts_action_once ON core.effect_attempts (action_id) WHERE action_id IS NOT NULL;

CREATE TABLE core.tool_permissions (
    id              bigserial   PRIMARY KEY,
    agent           text        NOT NULL,
    tool            text        NOT NULL,
    tool_version    text        NOT NULL,
    -- NULL: every conversation of the agent.
    conversation_id uuid,
    granted_by      text        NOT NULL,
    granted_at      timestamptz NOT NULL DEFAULT now(),
    revoked_by      text,
    revoked_at      timestamptz
);

CREATE INDEX tool_permissions_live_idx ON core.tool_permissions (agent, tool) WHERE revoked_at IS NULL;

-- +goose Down
DROP TABLE core.tool_permissions;
DROP TABLE core.effect_attempts;
DROP TABLE core.approvals;
DROP TABLE core.actions;
DROP FUNCTION core.actions_refuse_change();
