// Package sealtest is for tests only: a fresh random seal key.
package sealtest

import (
	"crypto/rand"
	"testing"

	"buddi/core/seal"
)

// Key returns a new random key; each call gives another.
func Key(t testing.TB) seal.Key {
	t.Helper()
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	k, err := seal.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
