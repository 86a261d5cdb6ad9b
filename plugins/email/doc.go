// Package email is the compiled-in email plugin (seed 004, "Email ingestion" and "Email
// adapter"): its accounts, its IMAP source's poll, and the tools that draft and send mail.
//
// An account ([Account]) names its IMAP and SMTP servers, each with a TLS mode (tls,
// starttls, or plain-loopback-only, which is refused for any host that is not a loopback
// address), the login name and the NAME of the vault entry that holds its app password: the
// password itself is never in the database. Only app passwords are accepted; xoauth2 is
// refused when the account is added.
//
// [Poller.Poll] reads one account's INBOX: it logs in, EXAMINEs the INBOX (read-only, so not
// even \Recent changes) and reads its UIDVALIDITY and UIDNEXT. A mailbox seen for the first time (a new name, or a known name
// with a new UIDVALIDITY: the old row is kept with its messages) starts at UIDNEXT-1, lowered
// by the account's backfill. Messages after the cursor are fetched with ENVELOPE, RFC822.SIZE
// and BODY.PEEK[] (never setting \Seen), in chunks, each chunk recorded with the cursor's
// advance in one transaction; a message is identified by the identity quad (account,
// mailbox, uidvalidity, uid), so recording is idempotent. Every network call is under a
// deadline ([DefaultTimeout]); a failure is returned as one sentence and kept as the
// account's last error.
//
// The flags the owner's mail client sets are kept per message and re-read at every poll:
// with CONDSTORE, those changed since the mailbox's highest mod-sequence; without, those of
// the newest messages. buddi sets none.
//
// Storage, in the plugin's own schema: email.accounts, email.mailboxes (the cursor and the
// mod-sequence), email.messages (the envelope: Message-ID, From, To, Subject, Date, size and
// flags, all text a stranger wrote), email.bodies, the raw message bounded to [MaxBody]
// bytes, apart from its row so that listing messages never reads bodies, and email.triage,
// the triage each message is owed, written in the transaction that records the message.
//
// # The inbox source
//
// [Source] is email.inbox, run by core under root/sources every [Period] (BUDDI_EMAIL_PERIOD)
// with the poller [Bind] gives it. A poll ([Poller.PollWaiting]) reads every account (one
// failing, or panicking, is that account's last error and does not stop the others), starts
// one triage run per message owed one for the holder of the mail role ([TriageRole]), once
// per message, and then waits in IDLE for the rest of its period ([IdleWindow]) on each
// account whose server offers it, reading mail as it arrives. The triage prompt
// ([TriagePrompt]) carries the message's envelope and text inside a fence whose tag has a
// mark drawn for that prompt, with [UntrustedMail] before and after it.
//
// # Drafting and sending
//
// Three tools, bound to the database, core's artifact store and the vault by [BindTools]
// (until then they refuse every call):
//
//   - email.draft (auto, state_write) checks a draft and saves it as a NEW artifact version,
//     the JSON of a [Draft] ([DraftMediaType], source email.draft): account, to, cc, bcc,
//     subject, body and, for an answer, in_reply_to_message (an email.messages id). The From
//     is always the account's address; a from argument naming any other is refused. A
//     redraft (draft: the artifact id) writes the next version of the same artifact; versions
//     never change, so an approval of one version is an approval of exactly what ships.
//   - email.send (gated, net_write) takes {draft, version}. Describe reads that exact version
//     and writes nothing; its envelope names every recipient (To, Cc and Bcc) in Targets, in
//     Detail and in the preview, with the subject, the whole body, the body's sha256, the
//     Message-ID the send will carry (derived from the call, so describing it again gives
//     the same) and the draft's artifact and version; its preconditions are the version's
//     sha256 and the sha256 of the whole message. Execute runs only approved, re-reads the
//     version, checks both digests against the approved envelope (an account whose address
//     changed since, say, refuses), and sends.
//   - email.reply (gated) is email.send for a draft that answers a received message: it
//     threads (In-Reply-To is the original's Message-ID, References its References, or its
//     In-Reply-To, then its Message-ID, at most 20), prefixes the subject with "Re: " once, and
//     sends a draft naming no recipient to the original's Reply-To, else its From (the
//     preview says when the Reply-To is not the From). The original is text a stranger wrote:
//     its header is read as data, never as instructions ([UntrustedMail] is in the tools'
//     descriptions), and its characters that reorder text are taken out.
//
// [Sender.Check] logs in to the account's SMTP server as a send would and quits, sending
// nothing (buddi email test). [Sender.Send] speaks SMTP (go-smtp) in the account's TLS mode: tls from the first byte;
// starttls, refusing a server that does not offer STARTTLS before anything else is said;
// plain-loopback-only to a loopback peer only. A server offering AUTH gets AUTH PLAIN with
// the vault's app password; one offering none is accepted only on loopback. MAIL FROM is the
// account's address, RCPT names every To, Cc and Bcc address, and the message (RFC 5322 by
// go-message: From, To, Cc, Subject, Date, Message-ID, In-Reply-To and References for a
// reply, MIME-Version, a text/plain UTF-8 body, quoted-printable) never has a Bcc header. A
// line break, a control character or a text-reordering character in any header value or
// address is refused.
//
// Exactly-once at the wire is impossible, so a send's outcome is classified where it
// happens. The effect begins at DATA: just before it the send calls plugins.Dispatch, so the
// effect ledger records the attempt then, and a failure before it (the dial, TLS, the
// login, MAIL, a refused recipient) is a plain failure: nothing was sent. A 4xx or 5xx
// answer to the body is the server refusing it: failed. Any other end once the body began
// (a write error, the deadline, the connection dropped, the run stopped, before the server's
// final answer) is an error matching plugins.ErrOutcomeUnknown, which the registry reports
// as unknown: the message may or may not have been sent, and it is never sent again by
// itself.
package email
