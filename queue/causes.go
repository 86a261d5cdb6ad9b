package queue

import (
	"regexp"
	"sort"
	"strings"
	"time"
)

// Cause groups failed jobs by why they failed (seed 004, "Failed jobs are decisions"): a
// known family by family and provider, anything else by status and the error's first line
// with ids, numbers and quoted values taken out (Why keeps one job's own words).
type Cause struct {
	Key      string  `json:"key"`      // the group's key
	Family   string  `json:"family"`   // quota, refused-key, lost-connection, or other
	Provider string  `json:"provider"` // anthropic, openai, or "" when none is named
	Why      string  `json:"why"`      // in plain words
	Passed   bool    `json:"passed"`   // the cause has plausibly passed, so Retry comes first
	Jobs     []int64 `json:"jobs"`     // the failed jobs in the group, newest first
}

var (
	quotedValue = regexp.MustCompile(`"[^"]*"|'[^']*'|‹[^›]*›`)
	uuidLike    = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	hexLike     = regexp.MustCompile(`\b[0-9a-fA-F]{12,}\b`)
	number      = regexp.MustCompile(`\d+(\.\d+)?`)
	spaces      = regexp.MustCompile(`\s+`)
)

// normalise is an error's first line with what varies between occurrences taken out.
func normalise(err string) string {
	line, _, _ := strings.Cut(err, "\n")
	line = uuidLike.ReplaceAllString(line, "…")
	line = quotedValue.ReplaceAllString(line, "…")
	line = hexLike.ReplaceAllString(line, "…")
	line = number.ReplaceAllString(line, "N")
	return strings.TrimSpace(spaces.ReplaceAllString(line, " "))
}

// firstLine is an error's first line, spaces folded.
func firstLine(err string) string {
	line, _, _ := strings.Cut(err, "\n")
	return strings.TrimSpace(spaces.ReplaceAllString(line, " "))
}

// family recognises the known causes.
func family(err string) (fam, why string, passesWithTime time.Duration) {
	e := strings.ToLower(err)
	switch {
	case strings.Contains(e, "limiting this account") || strings.Contains(e, "rate limit") || strings.Contains(e, "quota") || strings.Contains(e, "status 429"):
		return "quota", "The model provider was limiting the account's requests (a rate limit or a quota).", 24 * time.Hour
	case strings.Contains(e, "refused this account's key") || strings.Contains(e, "status 401") || strings.Contains(e, "invalid x-api-key") || strings.Contains(e, "authentication_error"):
		return "refused-key", "The model provider refused the account's key: check or replace it, then retry.", 0
	case strings.Contains(e, "could not be reached") || strings.Contains(e, "connection refused") || strings.Contains(e, "connection reset") ||
		strings.Contains(e, "broke off") || strings.Contains(e, "no such host") || strings.Contains(e, "i/o timeout"):
		return "lost-connection", "The connection to the model provider was lost (the machine was offline, or the provider was down).", time.Hour
	}
	return "other", "", 0
}

func provider(err string) string {
	e := strings.ToLower(err)
	switch {
	case strings.Contains(e, "anthropic"):
		return "anthropic"
	case strings.Contains(e, "openai"):
		return "openai"
	}
	return ""
}

// Group sorts failed jobs into causes, biggest group first; now decides whether a cause has
// plausibly passed (a quota a day later, a lost connection an hour later).
func Group(jobs []FailedJob, now time.Time) []Cause {
	byKey := map[string]*Cause{}
	var order []string
	for _, j := range jobs {
		fam, why, heals := family(j.Error)
		prov := provider(j.Error)
		key := fam + "/" + prov
		if fam == "other" {
			key = "other/" + j.State + "/" + normalise(j.Error)
			// The words of the group's first job: what varies is taken out of the key that
			// groups them, never out of the fix the owner reads.
			why = "Failed (" + j.State + "): " + firstLine(j.Error)
		}
		c, ok := byKey[key]
		if !ok {
			c = &Cause{Key: key, Family: fam, Provider: prov, Why: why}
			byKey[key] = c
			order = append(order, key)
		}
		c.Jobs = append(c.Jobs, j.ID)
		if heals > 0 && now.Sub(j.At()) >= heals {
			c.Passed = true
		}
	}
	out := make([]Cause, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, k int) bool { return len(out[i].Jobs) > len(out[k].Jobs) })
	return out
}
