-- What buddi tells the owner unasked (notifyOwner, core/notify): one row per notice, with
-- where it was routed and whether it was pushed, seen or acted on. A row never lights a
-- permanent dot: the approvals and questions waiting stay the only things that count.

-- +goose Up
CREATE TABLE core.owner_notifications (
    id              bigserial PRIMARY KEY,
    key             text NOT NULL UNIQUE,
    kind            text NOT NULL,
    urgency         text NOT NULL CHECK (urgency IN ('urgent', 'normal', 'info')),
    title           text NOT NULL,
    body            text NOT NULL DEFAULT '',
    link            text NOT NULL DEFAULT '',
    conversation_id uuid REFERENCES core.conversations (id) ON DELETE SET NULL,
    routes          text[] NOT NULL DEFAULT '{}',
    pushed_at       timestamptz,
    push_error      text NOT NULL DEFAULT '',
    seen_at         timestamptz,
    acted_at        timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX owner_notifications_created_idx ON core.owner_notifications (created_at DESC, id DESC);

-- +goose Down
DROP TABLE core.owner_notifications;
