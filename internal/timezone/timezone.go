// Package timezone finds the owner's IANA time zone, the zone a mission or reminder without
// one is read in. time.Local cannot say it: its name is "Local" unless TZ is set, and a
// schedule saved as UTC fires an hour or two off in Berlin. The zone comes from TZ when it
// names a zone, else from the target of /etc/localtime (a link into .../zoneinfo/Area/City),
// else from /etc/timezone, else it is UTC and says so.
//
// Importing the package embeds the zone database (time/tzdata), so every zone loads on a
// machine without /usr/share/zoneinfo.
package timezone

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zones load on machines without zoneinfo
)

// The places a zone is read from, for Zone.Source.
const (
	FromTZ        = "TZ"             // the TZ environment variable
	FromLocaltime = "/etc/localtime" // the target of the /etc/localtime link
	FromTimezone  = "/etc/timezone"  // the first line of /etc/timezone
	FromNowhere   = ""               // nothing named a zone: UTC
)

// Zone is the owner's time zone and where it was found.
type Zone struct {
	Name   string `json:"name"`           // the IANA name, like Europe/Berlin; UTC when nothing named one
	Source string `json:"source"`         // where it was read (FromTZ, FromLocaltime, FromTimezone), or FromNowhere
	Note   string `json:"note,omitempty"` // when nothing named a zone: what was looked at and how to set one
}

// Found reports whether the zone was read from the machine rather than assumed.
func (z Zone) Found() bool { return z.Source != FromNowhere }

// Location loads the zone (UTC if its name does not load).
func (z Zone) Location() *time.Location {
	if loc, err := Load(z.Name); err == nil {
		return loc
	}
	return time.UTC
}

// Load loads an IANA zone by name; "", "Local" and names that are not in the zone database
// are errors that say what a zone looks like.
func Load(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("time zone %q is not an IANA zone: name one, like Europe/Berlin", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q is not an IANA zone (like Europe/Berlin): %w", name, err)
	}
	return loc, nil
}

// Detect finds the owner's zone on this machine: TZ, /etc/localtime, /etc/timezone, else
// UTC with a note saying so. `buddi init` saves what it finds.
func Detect() Zone { return DetectIn("/", os.Getenv) }

var local = sync.OnceValue(Detect)

// Local is Detect, read once per process: the default zone of a new mission or reminder.
func Local() Zone { return local() }

// DetectIn is Detect with the machine's root directory and environment given (for tests, a
// temporary directory and a map).
func DetectIn(root string, getenv func(string) string) Zone {
	if tz, ok := fromTZ(getenv("TZ")); ok {
		return Zone{Name: tz, Source: FromTZ}
	}
	if target, err := os.Readlink(filepath.Join(root, "etc", "localtime")); err == nil {
		if name, ok := FromPath(target); ok {
			return Zone{Name: name, Source: FromLocaltime}
		}
	}
	if raw, err := os.ReadFile(filepath.Join(root, "etc", "timezone")); err == nil {
		first, _, _ := strings.Cut(string(raw), "\n")
		if name := strings.TrimSpace(first); valid(name) {
			return Zone{Name: name, Source: FromTimezone}
		}
	}
	return Zone{Name: "UTC", Source: FromNowhere,
		Note: "no time zone found (TZ is not a zone name, /etc/localtime is not a link into zoneinfo, /etc/timezone names none), so UTC: set TZ, like TZ=Europe/Berlin, or give --tz"}
}

// fromTZ reads TZ: a zone name, optionally after a colon (":Europe/Berlin"), or a path into
// a zoneinfo directory. POSIX rules ("CET-1CEST") and an empty TZ name no zone.
func fromTZ(tz string) (string, bool) {
	tz = strings.TrimPrefix(strings.TrimSpace(tz), ":")
	if strings.HasPrefix(tz, "/") {
		return FromPath(tz)
	}
	if valid(tz) {
		return tz, true
	}
	return "", false
}

// FromPath reads the zone's name from a path into a zoneinfo directory
// ("/usr/share/zoneinfo/Europe/Berlin", "../usr/share/zoneinfo/posix/Asia/Tokyo",
// "/var/db/timezone/zoneinfo/America/New_York"): the part after the last "zoneinfo/", when
// it names a zone.
func FromPath(p string) (string, bool) {
	p = filepath.ToSlash(filepath.Clean(p))
	i := strings.LastIndex(p, "zoneinfo/")
	if i < 0 {
		return "", false
	}
	name := p[i+len("zoneinfo/"):]
	for _, tree := range []string{"posix/", "right/"} {
		name = strings.TrimPrefix(name, tree)
	}
	if !valid(name) {
		return "", false
	}
	return name, true
}

// valid reports whether name is a zone in the database, by its canonical spelling: not
// "Local", not a path, not empty.
func valid(name string) bool {
	if name == "" || name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}
