package scheduler_test

import (
	"testing"
	"time"

	"buddi/scheduler"
)

// A 02:30 daily mission across both DST changes, in two zones.
func TestDailyAcrossDST(t *testing.T) {
	tests := []struct {
		zone, from string
		want       []string // the next three instants, as RFC 3339 in the zone
	}{
		// Spring forward: 02:30 does not exist; it runs when the clock jumps to 03:00.
		{"America/New_York", "2026-03-07T03:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}},
		{"Europe/Berlin", "2026-03-28T03:00:00+01:00", []string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00"}},
		// Fall back: 02:30 happens twice (Berlin); it runs once, the first time.
		{"Europe/Berlin", "2026-10-24T03:00:00+02:00", []string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00", "2026-10-27T02:30:00+01:00"}},
		{"America/New_York", "2026-10-31T03:00:00-04:00", []string{"2026-11-01T02:30:00-05:00", "2026-11-02T02:30:00-05:00", "2026-11-03T02:30:00-05:00"}},
	}
	for _, tt := range tests {
		s, err := scheduler.Parse("30 2 * * *", tt.zone)
		if err != nil {
			t.Fatal(err)
		}
		from, _ := time.Parse(time.RFC3339, tt.from)
		got := s.Between(from, from.AddDate(0, 0, 4), 3)
		if len(got) != 3 {
			t.Fatalf("%s from %s: %v", tt.zone, tt.from, got)
		}
		for i, g := range got {
			if g.In(s.Loc).Format(time.RFC3339) != tt.want[i] {
				t.Errorf("%s from %s: instant %d = %s, want %s", tt.zone, tt.from, i, g.In(s.Loc).Format(time.RFC3339), tt.want[i])
			}
		}
	}
}

// Across the fall-back hour an hourly schedule runs each wall time once.
func TestHourlyAcrossFallBack(t *testing.T) {
	s, _ := scheduler.Parse("0 * * * *", "Europe/Berlin")
	from, _ := time.Parse(time.RFC3339, "2026-10-25T00:30:00+02:00")
	got := s.Between(from, from.Add(5*time.Hour), 10)
	var walls []string
	for _, g := range got {
		walls = append(walls, g.In(s.Loc).Format("15:04 -07"))
	}
	want := []string{"01:00 +02", "02:00 +02", "03:00 +01", "04:00 +01"}
	if len(walls) != len(want) {
		t.Fatalf("instants %v, want %v", walls, want)
	}
	for i := range want {
		if walls[i] != want[i] {
			t.Fatalf("instants %v, want %v", walls, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range [][2]string{{"61 * * * *", "UTC"}, {"* * *", "UTC"}, {"0 9 * * *", "Mars/Olympus"}} {
		if _, err := scheduler.Parse(c[0], c[1]); err == nil {
			t.Errorf("%q in %q parsed", c[0], c[1])
		}
	}
}

func TestWords(t *testing.T) {
	for expr, want := range map[string]string{
		"0 9 * * 1-5": "weekdays at 09:00", "30 2 * * *": "every day at 02:30", "15 * * * *": "every hour at :15",
		"0 9 * * 1": "Mondays at 09:00", "0 8 1 * *": "on the 1st of each month at 08:00", "0 8 22 * *": "on the 22nd of each month at 08:00",
		"0 8 * 1 *": "on the schedule 0 8 * 1 *",
	} {
		s, err := scheduler.Parse(expr, "UTC")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Words(); got != want {
			t.Errorf("%q: %q, want %q", expr, got, want)
		}
	}
}
