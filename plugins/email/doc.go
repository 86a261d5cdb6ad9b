// Package email is the compiled-in email plugin (seed 004, "Email ingestion" and "Email
// adapter"). This first part is its accounts and its IMAP source's poll; triage, drafts,
// email.send and the Email page come later (issue 20).
//
// An account ([Account]) names its IMAP and SMTP servers, each with a TLS mode (tls,
// starttls, or plain-loopback-only, which is refused for any host that is not a loopback
// address), the login name and the NAME of the vault entry that holds its app password: the
// password itself is never in the database. Only app passwords are accepted; xoauth2 is
// refused when the account is added.
//
// [Poller.Poll] reads one account's INBOX: it logs in, SELECTs the INBOX and reads its
// UIDVALIDITY and UIDNEXT. A mailbox seen for the first time (a new name, or a known name
// with a new UIDVALIDITY: the old row is kept with its messages) starts at UIDNEXT-1, lowered
// by the account's backfill. Messages after the cursor are fetched with ENVELOPE, RFC822.SIZE
// and BODY.PEEK[] (never setting \Seen), in chunks, each chunk recorded with the cursor's
// advance in one transaction; a message is identified by the identity quad (account,
// mailbox, uidvalidity, uid), so recording is idempotent. Every network call is under a
// deadline ([DefaultTimeout]); a failure is returned as one sentence and kept as the
// account's last error.
//
// Storage, in the plugin's own schema: email.accounts, email.mailboxes (the cursor),
// email.messages (the envelope: Message-ID, From, To, Subject, Date and size, all text a
// stranger wrote) and email.bodies, the raw message bounded to [MaxBody] bytes, apart from
// its row so that listing messages never reads bodies.
package email
