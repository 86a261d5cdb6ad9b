package doctor

import (
	"testing"

	"buddi/health"
	"buddi/internal/timezone"
)

func TestZoneNotFoundIsAWarningWithHowToSetIt(t *testing.T) {
	var r Report
	r.checkZone(timezone.Zone{Name: "UTC", Source: timezone.FromNowhere})
	r.checkZone(timezone.Zone{Name: "Europe/Berlin", Source: timezone.FromLocaltime})
	r.finish()
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
		{"concierge has no model account yet: give it one with `buddi agents set concierge --account NAME --model MODEL`.",
			"concierge has no model account yet", "Give it one with `buddi agents set concierge --account NAME --model MODEL`."},
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
