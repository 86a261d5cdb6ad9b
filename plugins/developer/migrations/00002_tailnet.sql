-- +goose Up
-- Settings → Developer's Tailscale switch (§12): whether a process started with
-- developer.start also gets a port of its own on the tailnet, guarded by the owner's tailnet
-- login. One row, set by the owner only; no row means off.
CREATE TABLE developer.tailnet (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    previews   boolean     NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE developer.tailnet;
