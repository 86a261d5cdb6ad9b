package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// WireToolNamePattern is what both wires accept as a tool name.
var WireToolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// hashedMarker separates the readable part of a hashed wire name from its hash. A readable
// wire name never contains it (see [WireToolName]).
const hashedMarker = "___"

// WireToolName returns the name tool name has on the wire. It is a pure function, so a tool
// keeps its wire name from turn to turn, and it is injective, so two tools never share one.
//
// The readable form: a name made of letters, digits, '-', '_' and '.', with no "__", "_.",
// "._" or "..", whose dots become "__" within 64 characters, is sent with each '.' written
// "__" (developer.run → developer__run). Decoding turns each "__" back into '.'; the
// excluded sequences are exactly those that would make that ambiguous, and no readable wire
// name contains "___".
//
// Every other name is hashed: its letters, digits and '-' (others become '-'), cut to 40,
// then "___", then 16 hex digits of its SHA-256. Only a [ToolNames] that has seen the name
// can turn such a wire name back.
func WireToolName(name string) string {
	if readable(name) {
		if w := strings.ReplaceAll(name, ".", "__"); len(w) <= 64 {
			return w
		}
	}
	sum := sha256.Sum256([]byte(name))
	prefix := []byte(name)
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	for i, c := range prefix {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			prefix[i] = '-'
		}
	}
	return string(prefix) + hashedMarker + hex.EncodeToString(sum[:8])
}

// readable reports whether name can take the readable wire form.
func readable(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	for _, bad := range []string{"__", "_.", "._", ".."} {
		if strings.Contains(name, bad) {
			return false
		}
	}
	return true
}

// decodeReadable turns a readable wire name back into the tool name, and reports false for
// a hashed one.
func decodeReadable(wire string) (string, bool) {
	if strings.Contains(wire, hashedMarker) {
		return "", false
	}
	return strings.ReplaceAll(wire, "__", "."), true
}

// ToolNames maps tool names to their wire names and back for one call. Wire names are
// [WireToolName]'s; the map remembers every name it encoded, so that a hashed wire name the
// model sends back decodes too. Safe for concurrent use.
type ToolNames struct {
	mu       sync.Mutex
	fromWire map[string]string
}

// NewToolNames returns a mapping that knows names already.
func NewToolNames(names ...string) (*ToolNames, error) {
	m := &ToolNames{fromWire: map[string]string{}}
	for _, n := range names {
		if _, err := m.Wire(n); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Wire returns name's wire name and remembers it. It fails only if two different names
// would share a wire name, which the encoding rules out save for a SHA-256 collision.
func (m *ToolNames) Wire(name string) (string, error) {
	w := WireToolName(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.fromWire[w]; ok && prev != name {
		return "", fmt.Errorf("provider: tool names %q and %q share the wire name %q", prev, name, w)
	}
	m.fromWire[w] = name
	return w, nil
}

// Name returns the tool name of a wire name the model sent. A wire name this mapping never
// produced decodes by the readable rule when it can, and is returned as it is otherwise
// (the tool registry then refuses it as unknown).
func (m *ToolNames) Name(wire string) string {
	m.mu.Lock()
	name, ok := m.fromWire[wire]
	m.mu.Unlock()
	if ok {
		return name
	}
	if name, ok := decodeReadable(wire); ok {
		return name
	}
	return wire
}
