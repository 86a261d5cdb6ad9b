package redact

import (
	"fmt"
	"sync/atomic"
)

// Source gives the secrets to redact, name → value: a vault.Vault.
type Source interface {
	// Values returns every stored name and value.
	Values() (map[string]string, error)
}

// Load builds a Redactor from src's values.
func Load(src Source) (*Redactor, error) {
	secrets, err := src.Values()
	if err != nil {
		return nil, fmt.Errorf("redact: load secrets: %w", err)
	}
	return New(secrets), nil
}

// Live holds the current Redactor for a Source and rebuilds it on Reload (call it after
// `vault set` or `vault delete`, or when the vault file changes). Safe for concurrent use.
type Live struct {
	src Source
	cur atomic.Pointer[Redactor]
}

// NewLive returns a Live for src that redacts nothing until the first Reload succeeds.
func NewLive(src Source) *Live {
	return &Live{src: src}
}

// Reload rebuilds the Redactor from the source. When the source fails (a locked vault), the
// previous Redactor stays in place.
func (l *Live) Reload() error {
	r, err := Load(l.src)
	if err != nil {
		return err
	}
	l.cur.Store(r)
	return nil
}

// Redactor returns the current Redactor (nil, which redacts nothing, before the first Reload).
func (l *Live) Redactor() *Redactor { return l.cur.Load() }

// String redacts s with the current Redactor.
func (l *Live) String(s string) string { return l.cur.Load().String(s) }

// Bytes redacts b with the current Redactor.
func (l *Live) Bytes(b []byte) []byte { return l.cur.Load().Bytes(b) }

// JSON redacts the JSON document doc with the current Redactor.
func (l *Live) JSON(doc []byte) []byte { return l.cur.Load().JSON(doc) }
