package vault

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Memory is a Vault held in memory, for tests of the packages that use a vault. It can be
// locked to test that they fail closed.
type Memory struct {
	mu      sync.Mutex
	secrets map[string]string
	locked  *LockedError
	changes int // counts every Set, Delete, Lock and Unlock: the version
}

var _ Vault = (*Memory)(nil)

// NewMemory returns a Memory holding a copy of secrets (which may be nil). The names and
// values are not checked.
func NewMemory(secrets map[string]string) *Memory {
	m := maps.Clone(secrets)
	if m == nil {
		m = map[string]string{}
	}
	return &Memory{secrets: m}
}

// Lock makes every later call fail with a *LockedError giving reason.
func (m *Memory) Lock(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.locked = &LockedError{Reason: reason}
	m.changes++
}

// Unlock undoes Lock.
func (m *Memory) Unlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.locked = nil
	m.changes++
}

// String says "memory vault".
func (m *Memory) String() string { return "memory vault" }

// Set stores value under name.
func (m *Memory) Set(name, value string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := checkValue(name, value); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked != nil {
		return m.locked
	}
	m.secrets[name] = value
	m.changes++
	return nil
}

// Get returns the value stored under name.
func (m *Memory) Get(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked != nil {
		return "", m.locked
	}
	value, ok := m.secrets[name]
	if !ok {
		return "", &NotFoundError{Name: name}
	}
	return value, nil
}

// Present reports whether name has a value.
func (m *Memory) Present(name string) (bool, error) {
	_, err := m.Get(name)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes name.
func (m *Memory) Delete(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked != nil {
		return m.locked
	}
	if _, ok := m.secrets[name]; !ok {
		return &NotFoundError{Name: name}
	}
	delete(m.secrets, name)
	m.changes++
	return nil
}

// List returns the names, sorted.
func (m *Memory) List() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked != nil {
		return nil, m.locked
	}
	return slices.Sorted(maps.Keys(m.secrets)), nil
}

// Values returns a copy of every name and value.
func (m *Memory) Values() (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked != nil {
		return nil, m.locked
	}
	return maps.Clone(m.secrets), nil
}

// Version counts the changes.
func (m *Memory) Version() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fmt.Sprintf("memory:%d", m.changes), nil
}

// Check returns the lock, if locked.
func (m *Memory) Check() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked != nil {
		return m.locked
	}
	return nil
}
