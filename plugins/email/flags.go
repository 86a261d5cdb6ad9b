package email

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/jackc/pgx/v5"
)

// flagWindow is how many of the newest messages a poll re-reads the flags of on a server
// without CONDSTORE.
const flagWindow = 500

// flagNames is a message's flags as text, sorted, without \Recent (which says only which
// session saw the message first, and changes with every reader).
func flagNames(flags []imap.Flag) []string {
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		if strings.EqualFold(string(f), `\Recent`) {
			continue
		}
		out = append(out, string(f))
	}
	slices.Sort(out)
	return out
}

// syncFlags re-reads the flags the owner's mail client changed since the last poll, and
// keeps them: with CONDSTORE, those changed since the mailbox's highest mod-sequence read
// so far (FETCH … CHANGEDSINCE); without, those of the newest [flagWindow] messages. It
// sets no flag on the server.
func (p *Poller) syncFlags(ctx context.Context, s *session, mb Mailbox, condStore bool, highest uint64) error {
	if mb.LastUID == 0 {
		return nil
	}
	var since uint64
	if condStore {
		if err := p.Store.Pool.QueryRow(ctx, `SELECT highest_modseq FROM email.mailboxes WHERE id = $1`, mb.ID).Scan(&since); err != nil {
			return fmt.Errorf("email: read the mailbox's mod-sequence: %w", err)
		}
		if since != 0 && highest <= since {
			return nil // nothing changed since the last poll
		}
	}
	// Only messages buddi keeps: from the first one it read in this mailbox.
	var first *int64
	if err := p.Store.Pool.QueryRow(ctx, `SELECT min(uid) FROM email.messages WHERE mailbox_id = $1`, mb.ID).Scan(&first); err != nil {
		return fmt.Errorf("email: read the mailbox's first message: %w", err)
	}
	if first == nil {
		if condStore {
			_, err := p.Store.Pool.Exec(ctx, `UPDATE email.mailboxes SET highest_modseq = greatest(highest_modseq, $2) WHERE id = $1`, mb.ID, int64(highest))
			return err
		}
		return nil
	}
	from := uint32(*first)
	if !condStore && mb.LastUID >= flagWindow && mb.LastUID-flagWindow+1 > from {
		from = mb.LastUID - flagWindow + 1
	}
	opts := &imap.FetchOptions{UID: true, Flags: true}
	if condStore && since != 0 {
		opts.ChangedSince = since
	}
	set := imap.UIDSet{imap.UIDRange{Start: imap.UID(from), Stop: imap.UID(mb.LastUID)}}
	var bufs []*imapclient.FetchMessageBuffer
	if err := s.call(func() (err error) { bufs, err = s.c.Fetch(set, opts).Collect(); return err }); err != nil {
		return fmt.Errorf("reading the flags of INBOX on %s failed (%s)", s.addr, describe(err))
	}
	batch := &pgx.Batch{}
	for _, b := range bufs {
		batch.Queue(`UPDATE email.messages SET flags = $4 WHERE mailbox_id = $1 AND uidvalidity = $2 AND uid = $3 AND flags IS DISTINCT FROM $4`,
			mb.ID, int64(mb.UIDValidity), int64(b.UID), flagNames(b.Flags))
	}
	if condStore {
		batch.Queue(`UPDATE email.mailboxes SET highest_modseq = greatest(highest_modseq, $2) WHERE id = $1`, mb.ID, int64(highest))
	}
	if err := p.Store.Pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("email: keep the flags read: %w", err)
	}
	return nil
}
