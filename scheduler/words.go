package scheduler

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// howToWrite ends every refusal of FromWords: the shapes it reads, and cron for the rest.
const howToWrite = `write it like "every day at 8", "every weekday at 7:30", "mondays and thursdays at 18:00", "every 15 minutes" or "on the 1st of every month at 9", or give a cron expression such as "30 7 * * 1-5"`

// ErrNotAWhen is the error FromWords and ReadWhen wrap when they cannot read a schedule: its
// text is one sentence that says how to write it.
var ErrNotAWhen = errors.New("not a schedule")

// wordsError is a refusal: one sentence, and how to write it.
type wordsError struct{ msg string }

func (e wordsError) Error() string { return e.msg }

// Is makes every refusal an ErrNotAWhen.
func (e wordsError) Is(target error) bool { return target == ErrNotAWhen }

// refuse is a refusal whose sentence is why, then how to write it.
func refuse(why string) error {
	return wordsError{msg: why + ": " + howToWrite + "."}
}

var (
	weekdays = map[string]int{"sunday": 0, "sun": 0, "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "tues": 2,
		"wednesday": 3, "wed": 3, "thursday": 4, "thu": 4, "thur": 4, "thurs": 4, "friday": 5, "fri": 5, "saturday": 6, "sat": 6}
	numbers = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10, "twelve": 12,
		"fifteen": 15, "twenty": 20, "thirty": 30}
	// partOfDay is the time a part of the day names.
	partOfDay = map[string]int{"morning": 8, "mornings": 8, "noon": 12, "midday": 12, "evening": 18, "evenings": 18, "midnight": 0}

	intervalRe = regexp.MustCompile(`^(?:every|each) (?:(\w+) )?(minute|minutes|min|mins|hour|hours)(?: at :(\d{2})| at (\d{1,2}) past)?$`)
	// clockRe is a time of day after "at": 8, 8am, 8:30, 08:30 pm, 18.00, 7 o'clock, with
	// "in the morning/evening" after it.
	clockRe = regexp.MustCompile(`(?:^| )at (\d{1,2})(?:[:.](\d{2}))?(?: ?(am|pm|a\.m\.|p\.m\.))?(?: o'clock)?(?: in the (morning|evening|afternoon))?(?: |$)`)
	namedRe = regexp.MustCompile(`(?:^| )(?:at|in the) (noon|midday|midnight|morning|evening)(?: |$)`)
	dashRe  = regexp.MustCompile(`([a-z])-([a-z])`)
	halfRe  = regexp.MustCompile(`(\d)(am|pm|a\.m\.|p\.m\.)\b`)
	monthRe = regexp.MustCompile(`^(?:on )?(?:the )?(\d{1,2})(?:st|nd|rd|th)?(?: day)? of (?:every|each|the) month$|^(?:every|each) month on the (\d{1,2})(?:st|nd|rd|th)?$|^monthly on the (\d{1,2})(?:st|nd|rd|th)?$`)
)

// FromWords reads an owner's phrase for a recurring schedule ("every weekday at 7:30",
// "mondays and thursdays at 18:00", "every 15 minutes", "on the 1st of every month at 9",
// "every sunday evening") and returns the five-field cron expression it means. Morning is
// 08:00, noon 12:00, evening 18:00 and midnight 00:00; an hour without am or pm is on the
// 24-hour clock. A phrase it is not sure of is refused (an ErrNotAWhen) with one sentence
// that says how to write it.
func FromWords(phrase string) (string, error) {
	p := normalise(phrase)
	if p == "" {
		return "", refuse("say when the mission runs")
	}
	switch p {
	case "every minute", "each minute":
		return "* * * * *", nil
	case "hourly", "every hour", "each hour":
		return "0 * * * *", nil
	case "every half hour", "every half an hour", "each half hour":
		return "*/30 * * * *", nil
	case "every quarter hour", "every quarter of an hour":
		return "*/15 * * * *", nil
	}
	if m := intervalRe.FindStringSubmatch(p); m != nil {
		return interval(m)
	}

	// The time of day: "at …", and a part of the day ("sunday evening", "weekday mornings").
	hour, minute, timed, half := 0, 0, false, false
	if m := clockRe.FindStringSubmatch(p); m != nil {
		h, err := clock(m)
		if err != nil {
			return "", err
		}
		hour, minute, timed, half = h[0], h[1], true, m[3] != "" || m[4] != ""
		p = strings.Replace(p, strings.TrimSpace(m[0]), " ", 1)
	} else if m := namedRe.FindStringSubmatch(p); m != nil {
		hour, timed, half = partOfDay[m[1]], true, true
		p = strings.Replace(p, strings.TrimSpace(m[0]), " ", 1)
	}
	var rest []string
	for _, w := range strings.Fields(p) {
		part, ok := partOfDay[w]
		switch {
		case !ok:
			rest = append(rest, w)
		case !timed:
			hour, timed, half = part, true, true
		case half || part == 0 || part == 12 || (part == 8 && hour >= 12):
			return "", refuse(fmt.Sprintf("%q names two times of day", phrase))
		case part == 18 && hour < 12:
			hour, half = hour+12, true // "every sunday evening at 7"
		default:
			half = true
		}
	}
	if strings.Join(rest, " ") == "at" {
		rest = nil
	}

	days, dom, err := dayPart(rest, phrase)
	if err != nil {
		return "", err
	}
	if !timed {
		return "", refuse(fmt.Sprintf("%q does not say at what time", phrase))
	}
	return fmt.Sprintf("%d %d %s * %s", minute, hour, dom, days), nil
}

// normalise is phrase in lower case, its commas and "&" read as "and", "-" between day
// names as "to", its spaces single, and its trailing full stop gone.
func normalise(phrase string) string {
	p := strings.ToLower(strings.TrimSpace(phrase))
	p = strings.TrimRight(p, ".!")
	p = strings.NewReplacer(",", " and ", "&", " and ", "+", " and ").Replace(p)
	p = dashRe.ReplaceAllString(p, "$1 to $2")
	p = halfRe.ReplaceAllString(p, "$1 $2")
	p = strings.Join(strings.Fields(p), " ")
	p = strings.ReplaceAll(p, "and and", "and")
	p = strings.ReplaceAll(p, " through ", " to ")
	p = strings.ReplaceAll(p, " thru ", " to ")
	p = strings.ReplaceAll(p, " until ", " to ")
	p = strings.TrimPrefix(p, "run ")
	return p
}

// interval reads intervalRe's match: every N minutes (N divides 60) or every N hours (N
// divides 24), so the gap is the same across the hour and the day.
func interval(m []string) (string, error) {
	n := 1
	if m[1] != "" {
		v, err := strconv.Atoi(m[1])
		if err != nil {
			var ok bool
			if v, ok = numbers[m[1]]; !ok {
				return "", refuse(fmt.Sprintf("%q is not a number of %s", m[1], m[2]))
			}
		}
		n = v
	}
	if strings.HasPrefix(m[2], "min") {
		if m[3] != "" || m[4] != "" {
			return "", refuse("a time past the hour goes with hours, not minutes")
		}
		if n < 1 || n > 30 || 60%n != 0 {
			return "", refuse(fmt.Sprintf("every %d minutes does not divide the hour evenly (use 1, 2, 3, 4, 5, 6, 10, 12, 15, 20 or 30)", n))
		}
		if n == 1 {
			return "* * * * *", nil
		}
		return fmt.Sprintf("*/%d * * * *", n), nil
	}
	past := 0
	if s := m[3] + m[4]; s != "" {
		past, _ = strconv.Atoi(s)
		if past > 59 {
			return "", refuse(fmt.Sprintf("%d minutes past the hour is not a minute of the hour", past))
		}
	}
	if n < 1 || n > 12 || 24%n != 0 {
		return "", refuse(fmt.Sprintf("every %d hours does not divide the day evenly (use 1, 2, 3, 4, 6, 8 or 12)", n))
	}
	if n == 1 {
		return fmt.Sprintf("%d * * * *", past), nil
	}
	return fmt.Sprintf("%d */%d * * *", past, n), nil
}

// clock reads clockRe's match as an hour and a minute on the 24-hour clock.
func clock(m []string) ([2]int, error) {
	h, _ := strconv.Atoi(m[1])
	mi := 0
	if m[2] != "" {
		mi, _ = strconv.Atoi(m[2])
	}
	if h > 23 || mi > 59 {
		return [2]int{}, refuse(fmt.Sprintf("%s:%02d is not a time of day", m[1], mi))
	}
	half := strings.ReplaceAll(m[3], ".", "")
	if half == "" {
		switch m[4] {
		case "evening", "afternoon":
			half = "pm"
		case "morning":
			half = "am"
		}
	} else if m[4] != "" && (half == "am") != (m[4] == "morning") {
		return [2]int{}, refuse(fmt.Sprintf("%s %s in the %s is two times of day", m[1], m[3], m[4]))
	}
	switch half {
	case "am", "pm":
		if h < 1 || h > 12 {
			return [2]int{}, refuse(fmt.Sprintf("%d %s is not a time of day (am and pm go with 1 to 12)", h, half))
		}
		h %= 12
		if half == "pm" {
			h += 12
		}
	}
	return [2]int{h, mi}, nil
}

// dayPart reads the words that say which days: the cron's weekday and day-of-month fields.
func dayPart(words []string, phrase string) (dow, dom string, err error) {
	p := strings.Join(words, " ")
	if m := monthRe.FindStringSubmatch(p); m != nil {
		d, _ := strconv.Atoi(m[1] + m[2] + m[3])
		if d < 1 || d > 28 {
			return "", "", refuse(fmt.Sprintf("the %s is not in every month (pick a day from the 1st to the 28th)", ordinal(d)))
		}
		return "*", strconv.Itoa(d), nil
	}
	switch p {
	case "every day", "each day", "daily", "everyday", "every", "each", "every single day", "all days", "every day of the week":
		return "*", "*", nil
	case "every weekday", "each weekday", "weekdays", "on weekdays", "every weekdays", "every working day", "working days", "on working days",
		"weekday", "every business day", "business days":
		return "1-5", "*", nil
	case "every weekend", "weekends", "on weekends", "every weekend day", "weekend days", "on the weekend", "at the weekend", "on weekend days", "weekend":
		return "0,6", "*", nil
	case "":
		return "", "", refuse(fmt.Sprintf("%q does not say how often", phrase))
	}
	return weekdayList(words, phrase)
}

// weekdayList reads named days: "every monday", "mondays and thursdays", "monday to friday",
// "every mon and wed and fri". A single day named without "every" or a plural ("on monday")
// could be one day rather than each week: it is refused.
func weekdayList(words []string, phrase string) (string, string, error) {
	every := false
	if len(words) > 0 && (words[0] == "every" || words[0] == "each" || words[0] == "on") {
		every = words[0] != "on"
		words = words[1:]
	}
	var days []int
	plural, rangeNext := false, false
	for _, w := range words {
		switch w {
		case "and":
			continue
		case "to":
			if len(days) == 0 || rangeNext {
				return "", "", refuse(fmt.Sprintf("%q names a range of days without its start", phrase))
			}
			rangeNext = true
			continue
		case "every", "each":
			every = true
			continue
		}
		name, isPlural := strings.CutSuffix(w, "s")
		d, ok := weekdays[name]
		if !ok || !isPlural {
			d, ok = weekdays[w]
			isPlural = false
		}
		if !ok {
			return "", "", refuse(fmt.Sprintf("%q is not a day buddi can read in %q", w, phrase))
		}
		plural = plural || isPlural
		if rangeNext {
			from := days[len(days)-1]
			if d <= from {
				return "", "", refuse(fmt.Sprintf("%q runs its days backwards (say monday to friday, or list them)", phrase))
			}
			for x := from + 1; x <= d; x++ {
				days = append(days, x)
			}
			rangeNext, every = false, true // a run of days is each week's
			continue
		}
		days = append(days, d)
	}
	if rangeNext || len(days) == 0 {
		return "", "", refuse(fmt.Sprintf("%q does not say which days", phrase))
	}
	if !every && !plural {
		return "", "", refuse(fmt.Sprintf("%q could be one day or every week (say every %s, or %ss)", phrase, dayName(days[0]), dayName(days[0])))
	}
	slices.Sort(days)
	days = slices.Compact(days)
	return cronDays(days), "*", nil
}

// cronDays is a sorted set of weekdays as cron writes it: "1-5" for a run of three or more,
// else a list.
func cronDays(days []int) string {
	if len(days) == 7 {
		return "*"
	}
	if len(days) >= 3 && days[len(days)-1]-days[0] == len(days)-1 {
		return fmt.Sprintf("%d-%d", days[0], days[len(days)-1])
	}
	var s []string
	for _, d := range days {
		s = append(s, strconv.Itoa(d))
	}
	return strings.Join(s, ",")
}

// dayName is weekday d's name in lower case.
func dayName(d int) string {
	return strings.ToLower(time.Weekday(d).String())
}

// moreWords says in words the shapes Words does not: every N minutes, every N hours, and a
// set of weekdays at a time ("Mondays and Thursdays at 18:00"); else "".
func moreWords(minute, hour, dom, month, dow string) string {
	if dom != "*" || month != "*" {
		return ""
	}
	if hour == "*" && dow == "*" {
		if minute == "*" {
			return "every minute"
		}
		if n, ok := strings.CutPrefix(minute, "*/"); ok {
			return "every " + n + " minutes"
		}
	}
	m, errM := strconv.Atoi(minute)
	if errM != nil {
		return ""
	}
	if n, ok := strings.CutPrefix(hour, "*/"); ok && dow == "*" {
		return fmt.Sprintf("every %s hours at :%02d", n, m)
	}
	h, errH := strconv.Atoi(hour)
	if errH != nil {
		return ""
	}
	var names []string
	if from, to, ok := strings.Cut(dow, "-"); ok {
		a, errA := strconv.Atoi(from)
		b, errB := strconv.Atoi(to)
		if errA != nil || errB != nil || a < 0 || b > 6 || a >= b {
			return ""
		}
		return fmt.Sprintf("%ss to %ss at %02d:%02d", time.Weekday(a), time.Weekday(b), h, m)
	}
	for _, d := range strings.Split(dow, ",") {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 7 {
			return ""
		}
		names = append(names, time.Weekday(n%7).String()+"s")
	}
	if len(names) < 2 {
		return ""
	}
	return fmt.Sprintf("%s and %s at %02d:%02d", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], h, m)
}

// When is a schedule the owner wrote, read: the cron expression, the words for it, its zone
// and its next instants.
type When struct {
	Cron  string      `json:"cron"`  // the five-field expression
	Words string      `json:"words"` // the expression said in words (Schedule.Words)
	Zone  string      `json:"zone"`  // the IANA zone its wall times are in
	Next  []time.Time `json:"next"`  // its next three instants after now
}

// ReadWhen reads what the owner wrote for a schedule, words or a cron expression, in the zone
// tz: a five-field cron expression (or a descriptor such as @daily) is taken as it is, else
// the words are read by FromWords. A phrase that is neither is refused with one sentence that
// says how to write it (an ErrNotAWhen).
func ReadWhen(input, tz string, now time.Time) (When, error) {
	input = strings.TrimSpace(input)
	expr := input
	if !looksLikeCron(input) {
		var err error
		if expr, err = FromWords(input); err != nil {
			return When{}, err
		}
	}
	s, err := Parse(expr, tz)
	if err != nil {
		return When{}, fmt.Errorf("%w: %w", ErrNotAWhen, err)
	}
	return When{Cron: expr, Words: s.Words(), Zone: s.Loc.String(), Next: s.Between(now, now.AddDate(1, 0, 0), 3)}, nil
}

// looksLikeCron says whether s is written as cron: a descriptor, or five fields whose minute
// and hour hold only digits and cron's marks (words never start so).
func looksLikeCron(s string) bool {
	if strings.HasPrefix(s, "@") {
		return true
	}
	f := strings.Fields(s)
	return len(f) == 5 && strings.Trim(f[0]+f[1], "0123456789*/,-") == ""
}
