-- Flags: what the owner's mail client made of each message (\Seen, \Flagged, \Answered, …),
-- kept as the server says and re-read on every poll, incrementally where the server offers
-- CONDSTORE (the mailbox's highest mod-sequence read so far). buddi never sets a flag.

-- +goose Up

ALTER TABLE email.messages ADD COLUMN flags text[] NOT NULL DEFAULT '{}';
ALTER TABLE email.mailboxes ADD COLUMN highest_modseq bigint NOT NULL DEFAULT 0 CHECK (highest_modseq >= 0);

-- +goose Down

ALTER TABLE email.mailboxes DROP COLUMN highest_modseq;
ALTER TABLE email.messages DROP COLUMN flags;
