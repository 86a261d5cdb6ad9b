package timezone_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/internal/timezone"
)

// machine is a root directory with /etc/localtime (a link to target, or a plain file when
// target starts with "file:") and /etc/timezone (when etcTimezone is not "").
func machine(t *testing.T, target, etcTimezone string) string {
	t.Helper()
	root := t.TempDir()
	etc := filepath.Join(root, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	if data, ok := strings.CutPrefix(target, "file:"); ok {
		if err := os.WriteFile(filepath.Join(etc, "localtime"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if target != "" {
		if err := os.Symlink(target, filepath.Join(etc, "localtime")); err != nil {
			t.Fatal(err)
		}
	}
	if etcTimezone != "" {
		if err := os.WriteFile(filepath.Join(etc, "timezone"), []byte(etcTimezone), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name, tz, localtime, etcTimezone string
		want, source                     string
	}{
		{"TZ names a zone", "Europe/Berlin", "/usr/share/zoneinfo/Asia/Tokyo", "", "Europe/Berlin", timezone.FromTZ},
		{"TZ with a colon", ":Asia/Tokyo", "", "", "Asia/Tokyo", timezone.FromTZ},
		{"TZ as a path", "/usr/share/zoneinfo/America/Chicago", "", "", "America/Chicago", timezone.FromTZ},
		{"TZ a POSIX rule: the link", "CET-1CEST", "/usr/share/zoneinfo/Europe/Berlin", "", "Europe/Berlin", timezone.FromLocaltime},
		{"TZ says Local: the link", "Local", "/usr/share/zoneinfo/Europe/Berlin", "", "Europe/Berlin", timezone.FromLocaltime},
		{"a relative link", "", "../usr/share/zoneinfo/America/New_York", "", "America/New_York", timezone.FromLocaltime},
		{"a link into posix/", "", "/usr/share/zoneinfo/posix/Australia/Sydney", "", "Australia/Sydney", timezone.FromLocaltime},
		{"macOS", "", "/var/db/timezone/zoneinfo/America/Los_Angeles", "", "America/Los_Angeles", timezone.FromLocaltime},
		{"a link to UTC", "", "/usr/share/zoneinfo/Etc/UTC", "Europe/Paris\n", "Etc/UTC", timezone.FromLocaltime},
		{"a copied file: /etc/timezone", "", "file:TZif2", "Europe/Paris\n", "Europe/Paris", timezone.FromTimezone},
		{"a link to no zone: /etc/timezone", "", "/usr/share/zoneinfo/Not/AZone", "  Africa/Nairobi  \nextra", "Africa/Nairobi", timezone.FromTimezone},
		{"nothing names one", "", "/etc/other", "Mars/Olympus\n", "UTC", timezone.FromNowhere},
		{"no files at all", "", "", "", "UTC", timezone.FromNowhere},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := machine(t, tt.localtime, tt.etcTimezone)
			got := timezone.DetectIn(root, func(k string) string {
				if k == "TZ" {
					return tt.tz
				}
				return ""
			})
			if got.Name != tt.want || got.Source != tt.source {
				t.Fatalf("got %+v, want %s from %q", got, tt.want, tt.source)
			}
			if got.Found() != (tt.source != timezone.FromNowhere) || (got.Note == "") == !got.Found() {
				t.Fatalf("found %v with note %q", got.Found(), got.Note)
			}
			if got.Location().String() != tt.want {
				t.Fatalf("location %s, want %s", got.Location(), tt.want)
			}
		})
	}
}

// Berlin's 08:00 is 07:00 UTC in winter and 06:00 in summer: the zone is the wall clock.
func TestLoad(t *testing.T) {
	loc, err := timezone.Load("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		day  time.Time
		hour int
	}{{time.Date(2026, 1, 15, 8, 0, 0, 0, loc), 7}, {time.Date(2026, 7, 15, 8, 0, 0, 0, loc), 6}} {
		if h := c.day.UTC().Hour(); h != c.hour {
			t.Errorf("%s is %02d:00 UTC, want %02d:00", c.day, h, c.hour)
		}
	}
	for _, bad := range []string{"", "Local", "Europe/Nowhere"} {
		if _, err := timezone.Load(bad); err == nil || !strings.Contains(err.Error(), "Europe/Berlin") {
			t.Errorf("Load(%q): %v", bad, err)
		}
	}
}

// FromPath names a loadable zone or none, whatever the path.
func FuzzFromPath(f *testing.F) {
	for _, s := range []string{"/usr/share/zoneinfo/Europe/Berlin", "../zoneinfo/posix/Asia/Tokyo", "zoneinfo/", "zoneinfo/../../etc/passwd", "/zoneinfo/right/UTC", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		name, ok := timezone.FromPath(p)
		if !ok {
			if name != "" {
				t.Fatalf("FromPath(%q) = %q, not ok", p, name)
			}
			return
		}
		if _, err := timezone.Load(name); err != nil {
			t.Fatalf("FromPath(%q) = %q, which does not load: %v", p, name, err)
		}
	})
}

// A zone saved in the home is the owner's, whatever the machine says; a file that names no
// zone is passed over with a note; Save refuses a name that is not a zone.
func TestSavedZoneIsTheOwners(t *testing.T) {
	home := t.TempDir()
	if z := timezone.Owner(home); z.Source == timezone.FromSaved {
		t.Fatalf("nothing saved yet, but Owner says %+v", z)
	}
	for _, bad := range []string{"", "Local", "Mars/Olympus", "../etc/passwd", "/usr/share/zoneinfo/Europe/Berlin"} {
		if err := timezone.Save(home, bad); err == nil {
			t.Errorf("timezone.Save(%q) was accepted", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(home, timezone.SavedFile)); !os.IsNotExist(err) {
		t.Fatalf("a refused zone left a file: %v", err)
	}
	timezone.UseHome(home)
	t.Cleanup(func() { timezone.UseHome("") })
	before := timezone.Local()
	if err := timezone.Save(home, "Pacific/Chatham"); err != nil {
		t.Fatal(err)
	}
	if z := timezone.Owner(home); z.Name != "Pacific/Chatham" || z.Source != timezone.FromSaved || !z.Found() {
		t.Fatalf("saved zone read as %+v", z)
	}
	if z := timezone.Local(); z.Name != "Pacific/Chatham" {
		t.Fatalf("Local after Save in its home: %+v (before: %+v)", z, before)
	}
	if err := os.WriteFile(filepath.Join(home, timezone.SavedFile), []byte("not a zone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if z := timezone.Owner(home); z.Source == timezone.FromSaved || z.Note == "" {
		t.Fatalf("a file naming no zone: %+v", z)
	}
}
