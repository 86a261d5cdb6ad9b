package redact

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Source gives the secrets to redact, name → value: a vault.Vault.
type Source interface {
	// Values returns every stored name and value.
	Values() (map[string]string, error)
}

// Versioned is a Source that can tell, cheaply and without reading a value, whether its
// values may have changed: Version returns a token that is different after every change,
// whichever process made it (a vault.Vault).
type Versioned interface {
	// Version returns the token of the values as they are now.
	Version() (string, error)
}

// Load builds a Redactor from src's values.
func Load(src Source) (*Redactor, error) {
	secrets, err := src.Values()
	if err != nil {
		return nil, fmt.Errorf("redact: load secrets: %w", err)
	}
	return New(secrets), nil
}

// Live holds the Redactor for a Source and keeps it current. When the Source is Versioned,
// every use asks it for its version first and rebuilds the Redactor when it changed, so a
// secret stored by another process (`buddi vault set` while buddi serve runs) is redacted
// from the next use on: the version is read after the other process's write returned, and
// before the text is redacted. Safe for concurrent use.
type Live struct {
	src Source
	mu  sync.Mutex // one rebuild at a time
	cur atomic.Pointer[loaded]
}

// loaded is a Redactor and the version of the values it was built from.
type loaded struct {
	r       *Redactor
	version string
}

// NewLive returns a Live for src. A Versioned src is read at the first use; any other
// redacts nothing until the first Reload succeeds.
func NewLive(src Source) *Live {
	return &Live{src: src}
}

// Reload rebuilds the Redactor from the source now. When the source fails (a locked vault),
// the previous Redactor stays in place.
func (l *Live) Reload() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	version := "" // unknown: the next use that can read the version rebuilds again
	if v, ok := l.src.(Versioned); ok {
		if got, err := v.Version(); err == nil {
			version = got
		}
	}
	return l.load(version)
}

// load builds the Redactor; the version was read before the values, so a change between
// the two is seen again at the next use.
func (l *Live) load(version string) error {
	r, err := Load(l.src)
	if err != nil {
		if old := l.cur.Load(); old != nil {
			// Keep what redacted until now, and do not try again until the values change.
			l.cur.Store(&loaded{r: old.r, version: version})
		}
		return err
	}
	l.cur.Store(&loaded{r: r, version: version})
	return nil
}

// Current returns the Redactor for the source's values as they are now, rebuilding it when
// they changed since it was built.
func (l *Live) Current() *Redactor {
	cur := l.cur.Load()
	v, ok := l.src.(Versioned)
	if !ok {
		if cur == nil {
			return nil
		}
		return cur.r
	}
	version, err := v.Version()
	if err != nil && cur != nil {
		return cur.r // the version cannot be read now: keep what redacted until now
	}
	if cur == nil || cur.version != version {
		l.mu.Lock()
		if cur = l.cur.Load(); cur == nil || cur.version != version {
			_ = l.load(version) // a source that fails leaves the last Redactor in use
		}
		l.mu.Unlock()
		cur = l.cur.Load()
	}
	if cur == nil {
		return nil
	}
	return cur.r
}

// Redactor returns the current Redactor (nil, which redacts nothing, when none could be
// built yet).
func (l *Live) Redactor() *Redactor { return l.Current() }

// String redacts s with the current Redactor.
func (l *Live) String(s string) string { return l.Current().String(s) }

// Bytes redacts b with the current Redactor.
func (l *Live) Bytes(b []byte) []byte { return l.Current().Bytes(b) }

// JSON redacts the JSON document doc with the current Redactor.
func (l *Live) JSON(doc []byte) []byte { return l.Current().JSON(doc) }

// Stream returns a streaming redactor over the current Redactor.
func (l *Live) Stream() *Stream { return NewStream(l.Current()) }
