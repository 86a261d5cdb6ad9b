package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"testing"
	"unicode/utf8"

	"buddi/plugins"
)

// FuzzResolveArgs feeds arbitrary bytes to Resolve as a call's arguments. Resolve must never
// panic, must refuse with invalid-arguments whenever it refuses, and must never let through
// anything that is not one JSON object satisfying the test schema, as checked here by hand.
func FuzzResolveArgs(f *testing.F) {
	for _, seed := range []string{
		``, ` `, `{}`, `[]`, `null`, `0`, `"x"`, `{"path":"a"}`, `{"path":""}`,
		`{"path":"a","lines":1}`, `{"path":"a","lines":1.0}`, `{"path":"a","lines":1e2}`,
		`{"path":"a","lines":0}`, `{"path":"a","lines":-1}`, `{"path":"a","lines":1e999999}`,
		`{"path":"a","opts":{"mode":"fast","depth":5}}`, `{"path":"a","opts":{"mode":"warp"}}`,
		`{"path":"a","opts":{"depth":6,"mode":"slow"}}`, `{"path":"a","path":"b"}`,
		`{"path":"a"} {}`, `{"path":"a"}x`, `{"path":"a",}`, `{"path":"\ud800"}`, "{\"path\":\"\xff\"}",
		`{"path":"a","extra":[[[[{}]]]]}`, `{"path":"a","opts":{"mode":"fast","x":1}}`,
	} {
		f.Add([]byte(seed))
	}
	reg := mustNewF(f, manifest(newTool("test.read", plugins.TierAuto)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := reg.Resolve(t.Context(), plainCall("test.read", string(raw)), testNow)
		if err != nil {
			if !errors.Is(err, CodeInvalidArguments) {
				t.Fatalf("refused %q with %v, want invalid-arguments", raw, err)
			}
			return
		}
		if why := validTestArgs(raw); why != "" {
			t.Fatalf("Resolve accepted %q, which %s", raw, why)
		}
		if res.Tier != plugins.TierAuto || res.Args == nil {
			t.Fatalf("Resolve accepted %q as %+v", raw, res)
		}
	})
}

// mustNewF builds a registry for a fuzz target.
func mustNewF(f *testing.F, manifests ...plugins.Manifest) *Registry {
	r, err := New(manifests...)
	if err != nil {
		f.Fatalf("New: %v", err)
	}
	return r
}

// validTestArgs checks raw against testSchema without the schema library, and says what is
// wrong, or "" when raw is one JSON object that satisfies the schema.
func validTestArgs(raw []byte) string {
	if !json.Valid(raw) {
		return "is not valid JSON"
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return "is not a JSON object"
	}
	if dec.More() {
		return "has more after the object"
	}
	for key, val := range obj {
		switch key {
		case "path":
			var s string
			if json.Unmarshal(val, &s) != nil {
				return "has a path that is not a string"
			}
			if utf8.RuneCountInString(s) < 1 {
				return "has an empty path"
			}
		case "lines":
			if n, ok := integer(val); !ok || n.Cmp(big.NewRat(1, 1)) < 0 {
				return "has lines that is not an integer of at least 1"
			}
		case "opts":
			var opts map[string]json.RawMessage
			if json.Unmarshal(val, &opts) != nil || opts == nil {
				return "has opts that is not an object"
			}
			if _, ok := opts["mode"]; !ok {
				return "has opts without a mode"
			}
			for k, v := range opts {
				switch k {
				case "depth":
					if n, ok := integer(v); !ok || n.Cmp(big.NewRat(5, 1)) > 0 {
						return "has opts.depth that is not an integer of at most 5"
					}
				case "mode":
					var s string
					if json.Unmarshal(v, &s) != nil || s != "fast" && s != "slow" {
						return "has opts.mode that is neither fast nor slow"
					}
				default:
					return "has an unknown key in opts"
				}
			}
		default:
			return "has an unknown key"
		}
	}
	if _, ok := obj["path"]; !ok {
		return "has no path"
	}
	return ""
}

// integer reads a JSON number that is an integer (1.0 and 1e2 are, as JSON Schema counts).
func integer(raw json.RawMessage) (*big.Rat, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() {
		return nil, false
	}
	return r, true
}
