-- The email plugin's schema (seed 004, "Email ingestion"): accounts, the mailboxes seen in
-- them and the messages read from those mailboxes. A message is identified by the identity
-- quad (account, mailbox, uidvalidity, uid); Message-ID is evidence, not a key. No password
-- is stored here: an account names the vault entry that holds its app password.

-- +goose Up

CREATE TABLE email.accounts (
    id              bigserial   PRIMARY KEY,
    -- The owner's name for the account ("work"); what the CLI and the dashboard show.
    name            text        NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
    -- The address mail is sent from and received at.
    address         text        NOT NULL CHECK (address LIKE '%_@_%'),
    imap_host       text        NOT NULL CHECK (imap_host <> ''),
    imap_port       integer     NOT NULL CHECK (imap_port BETWEEN 1 AND 65535),
    -- tls: TLS from the first byte; starttls: upgraded before login; plain-loopback-only:
    -- no TLS, allowed only to a loopback address (a server on this machine, or a test).
    imap_tls        text        NOT NULL CHECK (imap_tls IN ('tls', 'starttls', 'plain-loopback-only')),
    smtp_host       text        NOT NULL CHECK (smtp_host <> ''),
    smtp_port       integer     NOT NULL CHECK (smtp_port BETWEEN 1 AND 65535),
    smtp_tls        text        NOT NULL CHECK (smtp_tls IN ('tls', 'starttls', 'plain-loopback-only')),
    username        text        NOT NULL CHECK (username <> ''),
    -- Only app passwords in this build; xoauth2 is refused when the account is added.
    auth            text        NOT NULL DEFAULT 'app-password' CHECK (auth = 'app-password'),
    -- The NAME of the vault entry holding the app password; never the password.
    password_secret text        NOT NULL CHECK (password_secret <> ''),
    -- How many messages before UIDNEXT a mailbox seen for the first time starts at
    -- (EMAIL_BACKFILL); 0 starts at now.
    backfill        integer     NOT NULL DEFAULT 0 CHECK (backfill >= 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- The end of the last poll that succeeded, and the sentence of the last that failed
    -- (empty once a poll succeeds again).
    last_sync       timestamptz,
    last_error      text        NOT NULL DEFAULT '',
    last_error_at   timestamptz
);

-- A mailbox occurrence: a UIDVALIDITY change is a new row, the old one kept with its messages.
CREATE TABLE email.mailboxes (
    id          bigserial   PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES email.accounts (id) ON DELETE CASCADE,
    name        text        NOT NULL CHECK (name <> ''),
    uidvalidity bigint      NOT NULL CHECK (uidvalidity BETWEEN 1 AND 4294967295),
    -- The cursor: every UID up to it has been read (or was before this mailbox was first seen).
    last_uid    bigint      NOT NULL CHECK (last_uid BETWEEN 0 AND 4294967295),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name, uidvalidity)
);

CREATE TABLE email.messages (
    id          bigserial   PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES email.accounts (id) ON DELETE CASCADE,
    mailbox_id  bigint      NOT NULL REFERENCES email.mailboxes (id) ON DELETE CASCADE,
    uidvalidity bigint      NOT NULL,
    uid         bigint      NOT NULL CHECK (uid BETWEEN 1 AND 4294967295),
    -- From the envelope, as the server gave it; all of it text a stranger wrote.
    message_id  text        NOT NULL DEFAULT '',
    from_addr   text        NOT NULL DEFAULT '',
    to_addrs    text        NOT NULL DEFAULT '',
    subject     text        NOT NULL DEFAULT '',
    sent_at     timestamptz,
    -- RFC822.SIZE: the whole message's size in bytes.
    size        bigint      NOT NULL DEFAULT 0 CHECK (size >= 0),
    ingested_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, mailbox_id, uidvalidity, uid)
);

CREATE INDEX messages_account_ingested ON email.messages (account_id, ingested_at DESC);

-- The raw message (BODY.PEEK[]), apart from its row so listing messages never reads bodies;
-- bounded by the poller (truncated says so).
CREATE TABLE email.bodies (
    message     bigint  PRIMARY KEY REFERENCES email.messages (id) ON DELETE CASCADE,
    raw         bytea   NOT NULL,
    truncated   boolean NOT NULL DEFAULT false
);
