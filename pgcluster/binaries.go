package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNoBinaries means no PostgreSQL server binaries were found.
var ErrNoBinaries = errors.New("pgcluster: no PostgreSQL server binaries")

// NoBinariesError says where the binaries were looked for.
type NoBinariesError struct {
	Looked []string // the places searched, in order
}

// Error says what happened in one sentence.
func (e *NoBinariesError) Error() string {
	return fmt.Sprintf("no PostgreSQL server (initdb and postgres) was found in %s: install PostgreSQL (on Debian: apt-get install postgresql) or set DATABASE_URL to a server you run",
		strings.Join(e.Looked, ", "))
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *NoBinariesError) Unwrap() error { return ErrNoBinaries }

// FindBinaries returns the directory that holds initdb and postgres. When override is set it
// is the only place looked; otherwise the newest /usr/lib/postgresql/<version>/bin, then PATH.
func FindBinaries(override string) (string, error) {
	if override != "" {
		if hasServer(override) {
			return override, nil
		}
		return "", &NoBinariesError{Looked: []string{override + " (BUDDI_PG_BINDIR)"}}
	}
	looked := []string{"/usr/lib/postgresql/*/bin"}
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin"); len(dirs) > 0 {
		sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
		for _, d := range dirs {
			if hasServer(d) {
				return d, nil
			}
		}
	}
	looked = append(looked, "PATH")
	if p, err := exec.LookPath("postgres"); err == nil {
		d := filepath.Dir(p)
		if hasServer(d) {
			return d, nil
		}
	}
	return "", &NoBinariesError{Looked: looked}
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
