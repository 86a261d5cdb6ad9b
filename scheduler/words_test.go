package scheduler_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"buddi/scheduler"
)

func TestFromWords(t *testing.T) {
	for phrase, want := range map[string]string{
		"every day at 8":                      "0 8 * * *",
		"Every day at 8.":                     "0 8 * * *",
		"daily at 02:30":                      "30 2 * * *",
		"every weekday at 7:30":               "30 7 * * 1-5",
		"weekdays at 8am":                     "0 8 * * 1-5",
		"weekdays at 8 am":                    "0 8 * * 1-5",
		"every monday at 9":                   "0 9 * * 1",
		"mondays at 9":                        "0 9 * * 1",
		"mondays and thursdays at 18:00":      "0 18 * * 1,4",
		"every mon, wed and fri at 6pm":       "0 18 * * 1,3,5",
		"monday to friday at 7":               "0 7 * * 1-5",
		"every monday through wednesday at 9": "0 9 * * 1-3",
		"mon-fri at 6:45 pm":                  "45 18 * * 1-5",
		"weekends at 10":                      "0 10 * * 0,6",
		"every saturday at 12am":              "0 0 * * 6",
		"every saturday at 12pm":              "0 12 * * 6",
		"every hour":                          "0 * * * *",
		"hourly":                              "0 * * * *",
		"every hour at :15":                   "15 * * * *",
		"every hour at 20 past":               "20 * * * *",
		"every 2 hours":                       "0 */2 * * *",
		"every 15 minutes":                    "*/15 * * * *",
		"every five minutes":                  "*/5 * * * *",
		"every minute":                        "* * * * *",
		"every half hour":                     "*/30 * * * *",
		"on the 1st of every month at 9":      "0 9 1 * *",
		"the 15th of each month at 17:30":     "30 17 15 * *",
		"every month on the 3rd at 8":         "0 8 3 * *",
		"every sunday evening":                "0 18 * * 0",
		"every sunday evening at 7":           "0 19 * * 0",
		"weekday mornings":                    "0 8 * * 1-5",
		"every morning":                       "0 8 * * *",
		"every day at noon":                   "0 12 * * *",
		"every day at midnight":               "0 0 * * *",
		"at 7 every weekday":                  "0 7 * * 1-5",
		"every day at 6 in the evening":       "0 18 * * *",
		"every friday at 5 in the afternoon":  "0 17 * * 5",
	} {
		got, err := scheduler.FromWords(phrase)
		if err != nil || got != want {
			t.Errorf("FromWords(%q) = %q, %v; want %q", phrase, got, err, want)
		}
	}
}

// What the parser is not sure of is refused, in one sentence that says how to write it.
func TestFromWordsRefuses(t *testing.T) {
	for phrase, why := range map[string]string{
		"":                                 "say when",
		"every monday":                     "at what time",
		"on monday at 9":                   "one day or every week",
		"monday at 9":                      "one day or every week",
		"every 45 minutes":                 "does not divide the hour",
		"every 7 hours":                    "does not divide the day",
		"every day at 25":                  "not a time of day",
		"every day at 8:75":                "not a time of day",
		"every day at 13pm":                "am and pm go with 1 to 12",
		"on the 31st of every month at 9":  "not in every month",
		"every funday at 9":                `"funday" is not a day`,
		"friday to monday at 9":            "backwards",
		"every night at 9":                 `"night" is not a day`,
		"every day at noon in the morning": "two times of day",
		"every morning at 7pm":             "two times of day",
		"in a bit":                         "",
		"at 9":                             "how often",
		"tomorrow at 9":                    "",
	} {
		got, err := scheduler.FromWords(phrase)
		if err == nil {
			t.Errorf("FromWords(%q) = %q, want a refusal", phrase, got)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, scheduler.ErrNotAWhen) || !strings.Contains(msg, why) || !strings.Contains(msg, "write it like") ||
			!strings.HasSuffix(msg, ".") || strings.Count(msg, ". ") > 0 || strings.Contains(msg, "\n") {
			t.Errorf("FromWords(%q): %q, want one sentence about %q that says how to write it", phrase, msg, why)
		}
	}
}

// Words → cron → Words() → cron: what the page shows for a schedule reads back as the same
// schedule, and never as the bare expression.
func TestWordsRoundTrip(t *testing.T) {
	for _, phrase := range []string{"every day at 8", "every weekday at 7:30", "weekdays at 8am", "every monday at 9",
		"mondays and thursdays at 18:00", "every mon, wed and fri at 6pm", "tuesdays to thursdays at 9", "weekends at 10",
		"every hour", "every hour at :15", "every 2 hours", "every 3 hours at :05", "every 15 minutes", "every minute",
		"on the 1st of every month at 9", "on the 22nd of each month at 7", "every sunday evening", "weekday mornings",
		"every day at midnight"} {
		expr, err := scheduler.FromWords(phrase)
		if err != nil {
			t.Fatalf("FromWords(%q): %v", phrase, err)
		}
		s, err := scheduler.Parse(expr, "Europe/Berlin")
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", phrase, expr, err)
		}
		words := s.Words()
		if strings.HasPrefix(words, "on the schedule") {
			t.Errorf("%q → %q reads back as %q", phrase, expr, words)
			continue
		}
		if back, err := scheduler.FromWords(words); err != nil || back != expr {
			t.Errorf("%q → %q → %q → %q, %v", phrase, expr, words, back, err)
		}
	}
}

// ReadWhen takes cron as it is and words through FromWords, and says the next three instants
// in the zone.
func TestReadWhen(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Date(2026, 3, 27, 12, 0, 0, 0, berlin) // a Friday, two days before summer time
	w, err := scheduler.ReadWhen("every weekday at 7:30", "Europe/Berlin", now)
	if err != nil {
		t.Fatal(err)
	}
	if w.Cron != "30 7 * * 1-5" || w.Words != "weekdays at 07:30" || w.Zone != "Europe/Berlin" || len(w.Next) != 3 {
		t.Fatalf("%+v", w)
	}
	for i, want := range []string{"Mon Mar 30 07:30 CEST", "Tue Mar 31 07:30 CEST", "Wed Apr 1 07:30 CEST"} {
		if got := w.Next[i].In(berlin).Format("Mon Jan 2 15:04 MST"); got != want {
			t.Errorf("next %d: %s, want %s", i, got, want)
		}
	}
	if w, err := scheduler.ReadWhen("*/20 9-17 * * mon-fri", "UTC", now); err != nil || w.Cron != "*/20 9-17 * * mon-fri" {
		t.Errorf("cron: %+v, %v", w, err)
	}
	if _, err := scheduler.ReadWhen("61 * * * *", "UTC", now); !errors.Is(err, scheduler.ErrNotAWhen) {
		t.Errorf("a bad cron: %v", err)
	}
	if _, err := scheduler.ReadWhen("whenever", "UTC", now); !errors.Is(err, scheduler.ErrNotAWhen) {
		t.Errorf("bad words: %v", err)
	}
}

// For any input, FromWords refuses in one sentence or gives an expression that parses and
// whose words read back as the same expression.
func FuzzFromWords(f *testing.F) {
	for _, s := range []string{"every day at 8", "mondays and thursdays at 18:00", "every 15 minutes", "on the 1st of every month at 9",
		"every sunday evening", "mon-fri at 6:45 pm", "every hour at :15", "at 7 every weekday", "weekday mornings at 9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, phrase string) {
		expr, err := scheduler.FromWords(phrase)
		if err != nil {
			if msg := err.Error(); !errors.Is(err, scheduler.ErrNotAWhen) || !strings.HasSuffix(msg, ".") || !strings.Contains(msg, "write it like") {
				t.Fatalf("FromWords(%q) refused with %q", phrase, msg)
			}
			return
		}
		s, err := scheduler.Parse(expr, "UTC")
		if err != nil {
			t.Fatalf("FromWords(%q) = %q, which does not parse: %v", phrase, expr, err)
		}
		if back, err := scheduler.FromWords(s.Words()); err != nil || back != expr {
			t.Fatalf("FromWords(%q) = %q, whose words %q read back as %q, %v", phrase, expr, s.Words(), back, err)
		}
	})
}
