package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrNoBinaries means no PostgreSQL server binaries were found (for the cluster's major
// version, when it has one).
var ErrNoBinaries = errors.New("pgcluster: no PostgreSQL server binaries")

// NoBinariesError says where the binaries were looked for.
type NoBinariesError struct {
	Looked []string // the places searched, in order
}

// Error says what happened in one sentence.
func (e *NoBinariesError) Error() string {
	return fmt.Sprintf("no PostgreSQL server (initdb and postgres) was found in %s: install PostgreSQL (%s) or set DATABASE_URL to a server you run",
		strings.Join(e.Looked, ", "), installHint(""))
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *NoBinariesError) Unwrap() error { return ErrNoBinaries }

// VersionError means the cluster was made by a PostgreSQL major version whose server is not
// installed here (or is not the one BUDDI_PG_BINDIR names).
type VersionError struct {
	// DataDir is the cluster's data directory (PGDATA).
	DataDir string
	// Cluster is the major version in the data directory's PG_VERSION ("16", or "9.6").
	Cluster string
	// Installed are the major versions found, newest first.
	Installed []string
	// Override is BUDDI_PG_BINDIR when it was set; Installed then holds its version only.
	Override string
}

// Error says what happened and what to do, in one sentence.
func (e *VersionError) Error() string {
	newest := "another version"
	if len(e.Installed) > 0 && e.Installed[0] != "" {
		newest = e.Installed[0]
	}
	switch {
	case e.Override != "":
		return fmt.Sprintf("The database in %s was made by PostgreSQL %s, and BUDDI_PG_BINDIR (%s) holds PostgreSQL %s: point BUDDI_PG_BINDIR at PostgreSQL %s's programs, or unset it.",
			e.DataDir, e.Cluster, e.Override, newest, e.Cluster)
	case compareMajor(e.Cluster, newest) > 0:
		return fmt.Sprintf("The database in %s was made by PostgreSQL %s, newer than the %s installed here: install %s.",
			e.DataDir, e.Cluster, newest, installHint(e.Cluster))
	default:
		only := newest + " is"
		if len(e.Installed) > 1 {
			only = strings.Join(e.Installed, ", ") + " are"
		}
		return fmt.Sprintf("The database in %s was made by PostgreSQL %s, and only %s installed here: install %s, or run `buddi db upgrade` to move it to %s (a backup is taken first).",
			e.DataDir, e.Cluster, only, installHint(e.Cluster), newest)
	}
}

// Unwrap gives ErrNoBinaries: there are no binaries for this cluster.
func (e *VersionError) Unwrap() error { return ErrNoBinaries }

// installHint names the package that installs PostgreSQL major (any version when "").
func installHint(major string) string {
	if runtime.GOOS == "darwin" {
		if major == "" {
			return "brew install postgresql@17"
		}
		return fmt.Sprintf("postgresql@%s (brew install postgresql@%s)", major, major)
	}
	if major == "" {
		return "on Debian: apt-get install postgresql"
	}
	return fmt.Sprintf("postgresql-%s (apt-get install postgresql-%s)", major, major)
}

// Install is one PostgreSQL server installation.
type Install struct {
	// BinDir holds initdb and postgres.
	BinDir string `json:"bindir"`
	// Major is its major version ("16", or "9.6" before 10); "" when it could not be told.
	Major string `json:"major"`
}

// search says where installations are looked for; defaultSearch is the real machine's, and
// tests build their own from temporary trees.
type search struct {
	// globs are bindir patterns, in order; a version in the path ("/postgresql/16/bin",
	// "postgresql@16/bin") is taken from it.
	globs []string
	// pgConfig returns `pg_config --bindir`, or "".
	pgConfig func() string
	// path returns the directory of `postgres` on PATH (through its links: the directory that
	// also holds pg_upgrade and its kin), or "".
	path func() string
}

var defaultSearch = search{
	globs: []string{
		"/usr/lib/postgresql/*/bin",
		"/opt/homebrew/opt/postgresql@*/bin",
		"/usr/local/opt/postgresql@*/bin",
		"/opt/homebrew/opt/postgresql/bin",
		"/usr/local/opt/postgresql/bin",
	},
	pgConfig: func() string {
		p, err := exec.LookPath("pg_config")
		if err != nil {
			return ""
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, p, "--bindir").Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	},
	path: func() string {
		p, err := exec.LookPath("postgres")
		if err != nil {
			return ""
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p)
	},
}

// looked names the places s searches, for NoBinariesError.
func (s search) looked() []string {
	return append(append([]string(nil), s.globs...), "pg_config --bindir", "PATH")
}

// installs lists the installations s finds, newest first (an unknown version last), each
// directory once.
func (s search) installs() []Install {
	var found []Install
	seen := map[string]bool{}
	add := func(dir, major string) {
		if dir == "" || !hasServer(dir) {
			return
		}
		// The same server reached through links (/usr/local/bin/postgres pointing into
		// /usr/lib/postgresql/15/bin) is one installation.
		key := dir
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, "postgres")); err == nil {
			key = filepath.Dir(real)
		}
		if seen[key] {
			return
		}
		seen[key] = true
		if major == "" {
			major = majorFromPath(dir)
		}
		if major == "" {
			major = serverMajor(dir)
		}
		found = append(found, Install{BinDir: dir, Major: major})
	}
	for _, g := range s.globs {
		dirs, _ := filepath.Glob(g)
		for _, d := range dirs {
			add(d, "")
		}
	}
	if s.pgConfig != nil {
		add(s.pgConfig(), "")
	}
	if s.path != nil {
		add(s.path(), "")
	}
	sort.SliceStable(found, func(i, j int) bool { return compareMajor(found[i].Major, found[j].Major) > 0 })
	return found
}

// find picks the bindir for the cluster in clusterDir ("" for none): BUDDI_PG_BINDIR
// (override) when set, else the installation of the cluster's major version, else (no
// cluster yet) the newest.
func (s search) find(override, clusterDir string) (string, error) {
	major, dataDir, err := clusterMajor(clusterDir)
	if err != nil {
		return "", err
	}
	if override != "" {
		if !hasServer(override) {
			return "", &NoBinariesError{Looked: []string{override + " (BUDDI_PG_BINDIR)"}}
		}
		if major != "" {
			if have := serverMajor(override); have != "" && have != major {
				return "", &VersionError{DataDir: dataDir, Cluster: major, Installed: []string{have}, Override: override}
			}
		}
		return override, nil
	}
	all := s.installs()
	if len(all) == 0 {
		return "", &NoBinariesError{Looked: s.looked()}
	}
	if major == "" {
		return all[0].BinDir, nil
	}
	var majors []string
	for _, in := range all {
		if in.Major == major {
			return in.BinDir, nil
		}
		if in.Major != "" && (len(majors) == 0 || majors[len(majors)-1] != in.Major) {
			majors = append(majors, in.Major)
		}
	}
	return "", &VersionError{DataDir: dataDir, Cluster: major, Installed: majors}
}

// FindBinaries returns the directory that holds initdb and postgres, for a new cluster:
// override (BUDDI_PG_BINDIR) when set, the only place looked; otherwise the newest version
// found in /usr/lib/postgresql/<version>/bin, Homebrew's postgresql@<version>, `pg_config
// --bindir` and PATH.
func FindBinaries(override string) (string, error) {
	return defaultSearch.find(override, "")
}

// FindBinariesFor returns the directory that holds initdb and postgres for the cluster in
// clusterDir (Options.Dir): the installation of the major version in its PG_VERSION, or the
// newest when it has none yet. override (BUDDI_PG_BINDIR) still wins, but one of another
// major version is refused with a *VersionError, as is a cluster whose version is not
// installed: both say what to do in one sentence, never with the server's FATAL lines.
func FindBinariesFor(override, clusterDir string) (string, error) {
	return defaultSearch.find(override, clusterDir)
}

// Installed lists the PostgreSQL server installations found on this machine, newest first.
func Installed() []Install { return defaultSearch.installs() }

// ClusterMajor is the major version recorded in the cluster's PG_VERSION ("16", or "9.6"),
// or "" when clusterDir holds no cluster yet.
func ClusterMajor(clusterDir string) (string, error) {
	major, _, err := clusterMajor(clusterDir)
	return major, err
}

var majorPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// clusterMajor reads PG_VERSION without following links inside the cluster's directory.
func clusterMajor(clusterDir string) (major, dataDir string, err error) {
	if clusterDir == "" {
		return "", "", nil
	}
	c := New(Options{Dir: clusterDir})
	dataDir = c.DataDir()
	if _, err := os.Lstat(dataDir); errors.Is(err, os.ErrNotExist) {
		return "", dataDir, nil
	}
	raw, err := c.readDataFile("PG_VERSION")
	if err != nil {
		return "", dataDir, err
	}
	major = strings.TrimSpace(raw)
	if major == "" {
		return "", dataDir, nil
	}
	if !majorPattern.MatchString(major) {
		return "", dataDir, fmt.Errorf("%s holds no PostgreSQL version: the database directory %s is damaged", filepath.Join(dataDir, "PG_VERSION"), dataDir)
	}
	return major, dataDir, nil
}

var pathMajor = regexp.MustCompile(`(?:/postgresql/|/postgresql@)([0-9]+(?:\.[0-9]+)?)/bin/?$`)

// majorFromPath reads the version from a Debian or Homebrew bindir's path.
func majorFromPath(dir string) string {
	if m := pathMajor.FindStringSubmatch(filepath.ToSlash(dir)); m != nil {
		return m[1]
	}
	return ""
}

var versionOutput = regexp.MustCompile(`\(PostgreSQL\) ([0-9]+)(?:\.([0-9]+))?`)

// serverMajor asks dir's postgres for its version: "postgres (PostgreSQL) 16.4 (Debian …)"
// is "16"; "9.6.24" is "9.6". "" when it does not say.
func serverMajor(dir string) string {
	if m := majorFromPath(dir); m != "" {
		return m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return ""
	}
	return parseServerVersion(string(out))
}

// parseServerVersion takes the major version from `postgres --version`'s output.
func parseServerVersion(out string) string {
	m := versionOutput.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	if n, _ := strconv.Atoi(m[1]); n < 10 && m[2] != "" {
		return m[1] + "." + m[2]
	}
	return m[1]
}

// compareMajor orders major versions numerically ("9.6" < "10" < "16"); "" is lowest.
func compareMajor(a, b string) int {
	pa, pb := majorParts(a), majorParts(b)
	for i := 0; i < 2; i++ {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func majorParts(v string) [2]int {
	if v == "" {
		return [2]int{-1, -1}
	}
	x, y, _ := strings.Cut(v, ".")
	a, _ := strconv.Atoi(x)
	b, _ := strconv.Atoi(y)
	return [2]int{a, b}
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
