package email

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/seal"
)

// ErrNoAccount is returned for an account name that is not in email.accounts.
var ErrNoAccount = errors.New("email: no such account")

// ErrNoKey means the store has no seal key, so it can add no account.
var ErrNoKey = errors.New("email: no seal key to add an account with")

// Store reads and writes the email schema.
type Store struct {
	Pool *pgxpool.Pool // the database holding the email schema
	// Key seals the accounts the owner adds and checks them as they are read; with the
	// zero key every account is refused and none can be added.
	Key seal.Key
}

const accountColumns = `id, name, address, imap_host, imap_port, imap_tls, smtp_host, smtp_port,
	smtp_tls, username, auth, password_secret, backfill, coalesce(last_sync, 'epoch'), last_error, seal`

// scanAccount reads an account row and checks its seal under key (Refused, sealed).
func scanAccount(row pgx.Row, key seal.Key) (Account, error) {
	var a Account
	var sum string
	err := row.Scan(&a.ID, &a.Name, &a.Address, &a.IMAPHost, &a.IMAPPort, &a.IMAPTLS, &a.SMTPHost,
		&a.SMTPPort, &a.SMTPTLS, &a.Username, &a.Auth, &a.PasswordSecret, &a.Backfill, &a.LastSync, &a.LastError, &sum)
	if a.LastSync.Equal(time.Unix(0, 0)) {
		a.LastSync = time.Time{}
	}
	if err == nil {
		a.Refused = key.Why(sum, purposeAccount, a.fields()...)
		a.sealed = a.Refused == ""
	}
	return a, err
}

// AddAccount validates a and stores it sealed, returning it with its id. An account of the
// same name whose seal does not check is replaced, keeping its mailboxes and messages: the
// owner adding it again is how it is re-created.
func (s Store) AddAccount(ctx context.Context, a Account) (Account, error) {
	if err := a.Validate(); err != nil {
		return Account{}, err
	}
	if s.Key.IsZero() {
		return Account{}, ErrNoKey
	}
	if a.Auth == "" {
		a.Auth = AuthAppPassword
	}
	a.Refused, a.sealed = "", false
	sum := s.Key.Seal(purposeAccount, a.fields()...)
	exists := fmt.Errorf("email: an account named %s already exists; choose another name", a.Name)
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		old, err := scanAccount(tx.QueryRow(ctx, `SELECT `+accountColumns+` FROM email.accounts WHERE name = $1 FOR UPDATE`, a.Name), s.Key)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return tx.QueryRow(ctx, `INSERT INTO email.accounts (name, address, imap_host, imap_port,
					imap_tls, smtp_host, smtp_port, smtp_tls, username, auth, password_secret, backfill, seal)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
				a.Name, a.Address, a.IMAPHost, a.IMAPPort, a.IMAPTLS, a.SMTPHost, a.SMTPPort, a.SMTPTLS,
				a.Username, a.Auth, a.PasswordSecret, a.Backfill, sum).Scan(&a.ID)
		case err != nil:
			return err
		case old.sealed:
			return exists
		}
		a.ID = old.ID
		_, err = tx.Exec(ctx, `UPDATE email.accounts SET address = $2, imap_host = $3, imap_port = $4, imap_tls = $5,
				smtp_host = $6, smtp_port = $7, smtp_tls = $8, username = $9, auth = $10, password_secret = $11,
				backfill = $12, seal = $13, last_error = '', last_error_at = NULL WHERE id = $1`,
			a.ID, a.Address, a.IMAPHost, a.IMAPPort, a.IMAPTLS, a.SMTPHost, a.SMTPPort, a.SMTPTLS,
			a.Username, a.Auth, a.PasswordSecret, a.Backfill, sum)
		return err
	})
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, exists):
		return Account{}, err
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		return Account{}, exists
	case err != nil:
		return Account{}, fmt.Errorf("email: add the account %s: %w", a.Name, err)
	}
	a.sealed = true
	return a, nil
}

// Account returns the account named name, or an error matching [ErrNoAccount]. One whose
// seal does not check is returned with Refused set.
func (s Store) Account(ctx context.Context, name string) (Account, error) {
	a, err := scanAccount(s.Pool.QueryRow(ctx, `SELECT `+accountColumns+` FROM email.accounts WHERE name = $1`, name), s.Key)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, fmt.Errorf("%w: %s (buddi email list shows the accounts)", ErrNoAccount, name)
	}
	if err != nil {
		return Account{}, fmt.Errorf("email: read the account %s: %w", name, err)
	}
	return a, nil
}

// Accounts returns every account, by name; one whose seal does not check has Refused set.
func (s Store) Accounts(ctx context.Context) ([]Account, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+accountColumns+` FROM email.accounts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("email: read the accounts: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		a, err := scanAccount(rows, s.Key)
		if err != nil {
			return nil, fmt.Errorf("email: read the accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Mailbox is one row of email.mailboxes: a mailbox under one UIDVALIDITY, with its cursor.
type Mailbox struct {
	ID          int64  // the row's id
	AccountID   int64  // the account's id
	Name        string // the mailbox's name ("INBOX")
	UIDValidity uint32 // the server's UIDVALIDITY for it
	LastUID     uint32 // every UID up to this one has been read
}

// Mailboxes returns the account's mailbox rows, oldest first.
func (s Store) Mailboxes(ctx context.Context, accountID int64) ([]Mailbox, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, account_id, name, uidvalidity, last_uid
		FROM email.mailboxes WHERE account_id = $1 ORDER BY id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("email: read the mailboxes: %w", err)
	}
	defer rows.Close()
	var out []Mailbox
	for rows.Next() {
		var m Mailbox
		var v, last int64
		if err := rows.Scan(&m.ID, &m.AccountID, &m.Name, &v, &last); err != nil {
			return nil, fmt.Errorf("email: read the mailboxes: %w", err)
		}
		m.UIDValidity, m.LastUID = uint32(v), uint32(last)
		out = append(out, m)
	}
	return out, rows.Err()
}

// mailbox returns the row for (account, name, uidValidity), creating it with its cursor at
// start when it is new.
func (s Store) mailbox(ctx context.Context, accountID int64, name string, uidValidity, start uint32) (Mailbox, bool, error) {
	m := Mailbox{AccountID: accountID, Name: name, UIDValidity: uidValidity}
	tag, err := s.Pool.Exec(ctx, `INSERT INTO email.mailboxes (account_id, name, uidvalidity, last_uid)
		VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, name, uidvalidity) DO NOTHING`,
		accountID, name, int64(uidValidity), int64(start))
	if err != nil {
		return m, false, fmt.Errorf("email: record the mailbox %s: %w", name, err)
	}
	var last int64
	if err := s.Pool.QueryRow(ctx, `SELECT id, last_uid FROM email.mailboxes
		WHERE account_id = $1 AND name = $2 AND uidvalidity = $3`, accountID, name, int64(uidValidity)).Scan(&m.ID, &last); err != nil {
		return m, false, fmt.Errorf("email: read the mailbox %s: %w", name, err)
	}
	m.LastUID = uint32(last)
	return m, tag.RowsAffected() == 1, nil
}

// behind reports whether the INBOX sel describes holds mail past the cursor of its mailbox
// row: a UIDNEXT beyond the next UID to read, or a UIDVALIDITY with no row yet.
func (s Store) behind(ctx context.Context, accountID int64, sel *imap.SelectData) (bool, error) {
	var last int64
	err := s.Pool.QueryRow(ctx, `SELECT last_uid FROM email.mailboxes WHERE account_id = $1 AND name = $2 AND uidvalidity = $3`,
		accountID, inbox, int64(sel.UIDValidity)).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("email: read the cursor of %s: %w", inbox, err)
	}
	return int64(sel.UIDNext) > last+1, nil
}

// Message is one row of email.messages: the envelope of one message, no body.
type Message struct {
	ID          int64     // the row's id
	AccountID   int64     // the identity quad: account,
	MailboxID   int64     // mailbox,
	UIDValidity uint32    // uidvalidity
	UID         uint32    // and uid
	MessageID   string    // the Message-ID, without angle brackets (as the envelope gives it): evidence, not a key
	From        string    // the From addresses, comma separated
	To          string    // the To addresses, comma separated
	Subject     string    // the Subject
	Date        time.Time // the Date header; zero when absent
	Size        int64     // RFC822.SIZE
	Flags       []string  // the flags the server reports (\Seen, \Flagged, …), as of the last poll
}

// fetched is a message read from the server, with its body.
type fetched struct {
	Message
	raw       []byte
	truncated bool
}

// record writes msgs (ON CONFLICT of the identity quad, nothing), each new one with the
// triage it is owed, and moves the mailbox's cursor to through, in one transaction. It
// returns how many rows were new.
func (s Store) record(ctx context.Context, mb Mailbox, msgs []fetched, through uint32) (int, error) {
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("email: record messages: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	n := 0
	for _, m := range msgs {
		var date *time.Time
		if !m.Date.IsZero() {
			date = &m.Date
		}
		var id int64
		flags := m.Flags
		if flags == nil {
			flags = []string{}
		}
		err := tx.QueryRow(ctx, `INSERT INTO email.messages (account_id, mailbox_id, uidvalidity, uid,
				message_id, from_addr, to_addrs, subject, sent_at, size, flags)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (account_id, mailbox_id, uidvalidity, uid) DO NOTHING RETURNING id`,
			mb.AccountID, mb.ID, int64(mb.UIDValidity), int64(m.UID), bound(m.MessageID, 1000),
			bound(m.From, 2000), bound(m.To, 4000), bound(m.Subject, 2000), date, m.Size, flags).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // recorded before
		}
		if err != nil {
			return 0, fmt.Errorf("email: record message %d: %w", m.UID, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO email.bodies (message, raw, truncated) VALUES ($1, $2, $3)`,
			id, m.raw, m.truncated); err != nil {
			return 0, fmt.Errorf("email: record the body of message %d: %w", m.UID, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO email.triage (message, account_id) VALUES ($1, $2)`, id, mb.AccountID); err != nil {
			return 0, fmt.Errorf("email: owe message %d its triage: %w", m.UID, err)
		}
		n++
	}
	if _, err := tx.Exec(ctx, `UPDATE email.mailboxes SET last_uid = greatest(last_uid, $2) WHERE id = $1`,
		mb.ID, int64(through)); err != nil {
		return 0, fmt.Errorf("email: move the cursor of %s: %w", mb.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("email: record messages: %w", err)
	}
	return n, nil
}

// Messages returns the account's messages, newest UID first, at most limit.
func (s Store) Messages(ctx context.Context, accountID int64, limit int) ([]Message, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, account_id, mailbox_id, uidvalidity, uid, message_id,
			from_addr, to_addrs, subject, coalesce(sent_at, 'epoch'), size, flags
		FROM email.messages WHERE account_id = $1 ORDER BY mailbox_id DESC, uid DESC LIMIT $2`, accountID, limit)
	if err != nil {
		return nil, fmt.Errorf("email: read messages: %w", err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var v, uid int64
		if err := rows.Scan(&m.ID, &m.AccountID, &m.MailboxID, &v, &uid, &m.MessageID, &m.From, &m.To,
			&m.Subject, &m.Date, &m.Size, &m.Flags); err != nil {
			return nil, fmt.Errorf("email: read messages: %w", err)
		}
		m.UIDValidity, m.UID = uint32(v), uint32(uid)
		if m.Date.Equal(time.Unix(0, 0)) {
			m.Date = time.Time{}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// setResult records the end of a poll: a success clears the last error and sets last_sync,
// a failure keeps the sentence.
func (s Store) setResult(ctx context.Context, accountID int64, at time.Time, pollErr error) error {
	var err error
	if pollErr == nil {
		_, err = s.Pool.Exec(ctx, `UPDATE email.accounts SET last_sync = $2, last_error = '', last_error_at = NULL WHERE id = $1`, accountID, at)
	} else {
		_, err = s.Pool.Exec(ctx, `UPDATE email.accounts SET last_error = $2, last_error_at = $3 WHERE id = $1`,
			accountID, bound(pollErr.Error(), 1000), at)
	}
	if err != nil {
		return fmt.Errorf("email: record the poll's outcome: %w", err)
	}
	return nil
}

// bound cuts s to at most n bytes, at a rune boundary.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
