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
	FromSaved     = "saved"          // the zone buddi init saved in the home (SavedFile)
)

// SavedFile is the file in buddi's home that holds the owner's zone, one IANA name on a line.
const SavedFile = "timezone"

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

// The home Local reads the saved zone from (UseHome).
var (
	localMu   sync.Mutex
	localHome string
)

// detected is Detect, read once per process.
var detected = sync.OnceValue(Detect)

// UseHome makes Local read the zone saved in home (Owner) instead of only the machine's.
// buddi's commands call it once they know their home.
func UseHome(home string) {
	localMu.Lock()
	defer localMu.Unlock()
	localHome = home
}

// Local is the owner's zone: the one saved in the home UseHome named, read afresh each time
// (a running buddi sees what buddi init saves), else the machine's, found once per process.
// It is the default zone of a new mission or reminder.
func Local() Zone {
	localMu.Lock()
	home := localHome
	localMu.Unlock()
	if home == "" {
		return detected()
	}
	return owner(home, detected)
}

// Owner is the owner's zone for the buddi whose home is home: the one saved there (Save),
// else the one found on this machine (Detect). A saved file that names no zone is passed
// over with a note, as if nothing were saved.
func Owner(home string) Zone { return owner(home, Detect) }

func owner(home string, detect func() Zone) Zone {
	raw, err := os.ReadFile(filepath.Join(home, SavedFile))
	if err != nil {
		return detect()
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	if name := strings.TrimSpace(first); valid(name) {
		return Zone{Name: name, Source: FromSaved}
	}
	z := detect()
	if z.Note == "" {
		z.Note = fmt.Sprintf("%s does not name a time zone, so the machine's is used: run `buddi init --force` or `buddi doctor --fix` to save it again", filepath.Join(home, SavedFile))
	}
	return z
}

// Save keeps name as the owner's zone in home, where Owner and Local read it; it refuses a
// name that is not a zone.
func Save(home, name string) error {
	if !valid(name) {
		return fmt.Errorf("time zone %q is not an IANA zone: name one, like Europe/Berlin", name)
	}
	path := filepath.Join(home, SavedFile)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("save the time zone in %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save the time zone in %s: %w", path, err)
	}
	return nil
}

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
