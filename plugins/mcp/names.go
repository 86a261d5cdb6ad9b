package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// pluginName is the registry's rule for a plugin's name.
var pluginName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// maxVerb is the registry's longest verb.
const maxVerb = 32

// CheckName refuses a plugin name the registry would not take, or one a compiled-in
// plugin holds (builtIn lists those).
func CheckName(name string, builtIn []string) error {
	if !pluginName.MatchString(name) {
		return fmt.Errorf("%q is not a plugin name: use lower case letters, digits, '-' and '_', starting with a letter, at most 32", name)
	}
	for _, b := range builtIn {
		if b == name {
			return fmt.Errorf("%q is the name of a plugin compiled into buddi: pick another name", name)
		}
	}
	return nil
}

// Verb sanitises an MCP tool's name into a registry verb: lower case letters, digits and
// '_', starting with a letter, at most 32 characters. A name that had to be shortened ends
// with a hash of the whole, so two long names stay apart.
func Verb(mcpName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(mcpName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	v := b.String()
	if v == "" || v[0] < 'a' || v[0] > 'z' {
		v = "t_" + v
	}
	if len(v) > maxVerb {
		v = hashed(v[:maxVerb-7], mcpName)
	}
	return v
}

// hashed is prefix, '_' and six hex digits of the hash of whole.
func hashed(prefix, whole string) string {
	sum := sha256.Sum256([]byte(whole))
	return prefix + "_" + hex.EncodeToString(sum[:])[:6]
}

// verbs gives each MCP name its verb; two names that sanitise alike both get a hash.
func verbs(mcpNames []string) map[string]string {
	out := map[string]string{}
	count := map[string]int{}
	for _, n := range mcpNames {
		count[Verb(n)]++
	}
	for _, n := range mcpNames {
		v := Verb(n)
		if count[v] > 1 {
			v = hashed(v[:min(len(v), maxVerb-7)], n)
		}
		out[n] = v
	}
	return out
}
