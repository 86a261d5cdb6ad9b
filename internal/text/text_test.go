package text

import "testing"

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "one": "one", "one\ntwo": "one", "\nx": ""} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	if Plural(1, "job") != "job" || Plural(0, "job") != "jobs" || Plural(2, "job") != "jobs" {
		t.Fatal("Plural")
	}
}

func TestValidUUID(t *testing.T) {
	for _, ok := range []string{"00000000-0000-4000-8000-000000000000", "A1B2C3D4-0000-4000-8000-00000000abcd"} {
		if !ValidUUID(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "00000000000040008000000000000000", "{00000000-0000-4000-8000-000000000000}", "00000000-0000-4000-8000-00000000000g", "00000000-0000-4000-8000_000000000000"} {
		if ValidUUID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
