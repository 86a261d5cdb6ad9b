-- Named provider accounts (seed 004, "Named provider accounts"): a wire, a credential kind,
-- an optional base URL and the name of the vault entry holding the secret (never the value),
-- and each agent's assignment of an account and a model.

-- +goose Up
CREATE TABLE core.provider_accounts (
    name        text        PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]{0,62}$'),
    wire        text        NOT NULL CHECK (wire IN ('anthropic', 'openai')),
    kind        text        NOT NULL CHECK (kind IN ('api-key', 'subscription-token')),
    base_url    text        NOT NULL DEFAULT '',
    secret_name text        NOT NULL CHECK (secret_name ~ '^[A-Z][A-Z0-9_]{0,63}$'),
    enabled     boolean     NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (wire = 'anthropic' OR kind = 'api-key')
);

CREATE TABLE core.agent_provider_accounts (
    agent   text        PRIMARY KEY,
    account text        NOT NULL REFERENCES core.provider_accounts (name) ON DELETE RESTRICT,
    model   text        NOT NULL CHECK (model <> ''),
    set_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE core.agent_provider_accounts;
DROP TABLE core.provider_accounts;
