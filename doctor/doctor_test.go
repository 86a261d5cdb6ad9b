package doctor

import (
	"strings"
	"testing"

	"buddi/health"
	"buddi/internal/timezone"
)

func TestZoneNotFoundIsAWarningWithHowToSetIt(t *testing.T) {
	var r Report
	home := t.TempDir()
	r.checkZone(home, timezone.Zone{Name: "UTC", Source: timezone.FromNowhere}, true)
	r.checkZone(home, timezone.Zone{Name: "Europe/Berlin", Source: timezone.FromLocaltime}, false)
	r.finish()
	if z := timezone.Owner(home); z.Source == timezone.FromSaved {
		t.Errorf("a zone was saved without --fix, or a zone nothing named was saved: %+v", z)
	}
	if c := r.Checks[0]; c.Status != Warn || c.Fix == "" {
		t.Errorf("no zone found: %+v; want a warning with a fix", c)
	}
	if c := r.Checks[1]; c.Status != OK {
		t.Errorf("a zone found: %+v", c)
	}
	if r.ExitCode != ExitOK || !r.Healthy {
		t.Errorf("a warning changed the exit code to %d", r.ExitCode)
	}
}

// doctor --fix saves the zone the machine names, and says so; a saved zone is reported as saved.
func TestFixSavesTheZone(t *testing.T) {
	home := t.TempDir()
	var r Report
	r.checkZone(home, timezone.Zone{Name: "Europe/Berlin", Source: timezone.FromLocaltime}, true)
	if c := r.Checks[0]; c.Status != OK || !strings.Contains(c.Sentence, "saved now") {
		t.Errorf("fix: %+v", c)
	}
	z := timezone.Owner(home)
	if z.Name != "Europe/Berlin" || z.Source != timezone.FromSaved {
		t.Fatalf("after --fix: %+v", z)
	}
	r = Report{}
	r.checkZone(home, z, false)
	if c := r.Checks[0]; c.Status != OK || !strings.Contains(c.Sentence, "saved in "+home) {
		t.Errorf("saved: %+v", c)
	}
}

func TestServerVault(t *testing.T) {
	for _, tt := range []struct {
		v    *health.Vault
		want Status
	}{
		{&health.Vault{Open: true, Where: "file vault /x/vault.json"}, OK},
		{&health.Vault{Where: "file vault /x/vault.json", Problem: "BUDDI_VAULT_KEY is not set."}, Fail},
		{nil, Warn},
	} {
		var r Report
		r.checkServerVault(&health.Report{Vault: tt.v})
		if c := r.Checks[0]; c.Status != tt.want || (tt.want != OK && c.Fix == "") {
			t.Errorf("vault %+v: %+v; want %s", tt.v, c, tt.want)
		}
	}
}

func TestSplitProblem(t *testing.T) {
	for _, tt := range []struct{ in, sentence, fix string }{
		{"@buddi has no model account yet: give it one with `buddi agents set @buddi --account NAME --model MODEL`.",
			"@buddi has no model account yet", "Give it one with `buddi agents set @buddi --account NAME --model MODEL`."},
		{"The vault is locked, so the model account's key cannot be read: start buddi with BUDDI_VAULT_KEY set.",
			"The vault is locked, so the model account's key cannot be read", "Start buddi with BUDDI_VAULT_KEY set."},
		{"its account could not be read", "its account could not be read", "Run `buddi agents list` and read buddi's log."},
		{"", "it cannot answer, and buddi did not say why", "Run `buddi agents list` and read buddi's log."},
	} {
		s, f := splitProblem(tt.in)
		if s != tt.sentence || f != tt.fix {
			t.Errorf("splitProblem(%q) = %q, %q", tt.in, s, f)
		}
	}
}
