package provider

import (
	"strings"
	"testing"
)

func TestWireToolName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want string // "" means: hashed (checked by shape)
	}{
		{"developer.run", "developer__run"},
		{"conversation.ask", "conversation__ask"},
		{"mail.send_draft", "mail__send_draft"},
		{"a.b.c", "a__b__c"},
		{"plain_name", "plain_name"},
		{"with-dash.x", "with-dash__x"},
		{".leading", "__leading"},
		{"trailing.", "trailing__"},
		{"double__underscore", ""},
		{"a_.b", ""},
		{"a._b", ""},
		{"a..b", ""},
		{"spaces are here", ""},
		{"ünïcode.tool", ""},
		{"", ""},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{strings.Repeat("x", 65), ""},
		{strings.Repeat("a.", 22), ""}, // 44 characters, 66 on the wire
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := WireToolName(tt.name)
			if !WireToolNamePattern.MatchString(got) {
				t.Fatalf("WireToolName(%q) = %q, outside the wire pattern", tt.name, got)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("WireToolName(%q) = %q, want %q", tt.name, got, tt.want)
			}
			if tt.want == "" && !strings.Contains(got, hashedMarker) {
				t.Errorf("WireToolName(%q) = %q, want a hashed name", tt.name, got)
			}
			m, err := NewToolNames(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if back := m.Name(got); back != tt.name {
				t.Errorf("round trip of %q: %q → %q", tt.name, got, back)
			}
			if tt.want != "" {
				// A readable name decodes without the mapping having seen it.
				fresh, _ := NewToolNames()
				if back := fresh.Name(got); back != tt.name {
					t.Errorf("fresh decode of %q = %q, want %q", got, back, tt.name)
				}
			}
		})
	}
}

func TestToolNamesCollisionFree(t *testing.T) {
	t.Parallel()
	// Names built to collide under naive mappings (dots to one underscore, dots to two,
	// truncation, replacing every odd character).
	names := []string{
		"a.b", "a_b", "a__b", "a-b", "a b", "a/b", "a.b.", "a.b_", "a._b", "a_.b",
		"developer.run", "developer__run", "developer_run", "developer..run",
		strings.Repeat("y", 70) + "1", strings.Repeat("y", 70) + "2",
		"tool!", "tool?", "",
	}
	m, err := NewToolNames(names...)
	if err != nil {
		t.Fatalf("NewToolNames: %v", err)
	}
	seen := map[string]string{}
	for _, n := range names {
		w, err := m.Wire(n)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[w]; ok {
			t.Errorf("%q and %q share the wire name %q", prev, n, w)
		}
		seen[w] = n
		if back := m.Name(w); back != n {
			t.Errorf("round trip of %q: %q → %q", n, w, back)
		}
	}
}

func TestToolNamesUnknownWireName(t *testing.T) {
	t.Parallel()
	m, _ := NewToolNames("developer.run")
	if got := m.Name("made_up___0123456789abcdef"); got != "made_up___0123456789abcdef" {
		t.Errorf("an unknown hashed name decoded to %q, want it unchanged", got)
	}
	if got := m.Name("other__tool"); got != "other.tool" {
		t.Errorf("an unknown readable name decoded to %q, want other.tool", got)
	}
}

func FuzzToolNames(f *testing.F) {
	for _, s := range []string{"developer.run", "a__b", "a._b", "", "x.y.z", "ünï", strings.Repeat("z", 80)} {
		f.Add(s, "a.b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		wa, wb := WireToolName(a), WireToolName(b)
		if !WireToolNamePattern.MatchString(wa) {
			t.Fatalf("WireToolName(%q) = %q, outside the wire pattern", a, wa)
		}
		if a != b && wa == wb {
			t.Fatalf("%q and %q share the wire name %q", a, b, wa)
		}
		m, err := NewToolNames(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Name(wa); got != a {
			t.Fatalf("round trip of %q: %q → %q", a, wa, got)
		}
		if got := m.Name(wb); got != b {
			t.Fatalf("round trip of %q: %q → %q", b, wb, got)
		}
	})
}
