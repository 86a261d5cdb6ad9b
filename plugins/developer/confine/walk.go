package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// The bounds a zero Limits stands for.
const (
	// DefaultMaxEntries is the default bound on the names a walk examines.
	DefaultMaxEntries = 10000
	// DefaultMaxDepth is the default bound on how deep a walk goes below where it starts.
	DefaultMaxDepth = 32
)

// Limits bounds a walk. The zero value uses the defaults.
type Limits struct {
	// MaxEntries bounds the names a walk examines: the entries it reports and the links and
	// protected paths it steps over alike, so a directory full of links is bounded work too.
	// Default (zero or less): DefaultMaxEntries.
	MaxEntries int
	// MaxDepth bounds how deep a walk reports: the entries directly in the starting
	// directory are at depth 1, and a directory at MaxDepth is reported but not entered.
	// Default (zero or less): DefaultMaxDepth.
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// WalkSummary says what a walk did and what it left out, for the result to report.
type WalkSummary struct {
	// Limits are the bounds the walk ran with, defaults filled in.
	Limits Limits
	// Entries is how many entries were passed to the callback.
	Entries int
	// SkippedLinks is how many symbolic links were stepped over (§2: listing and search
	// step over links and say how many).
	SkippedLinks int
	// SkippedProtected is how many protected paths (~/.ssh, …) were stepped over, when the
	// workspace is placed above them.
	SkippedProtected int
	// Unreadable is how many directories were reported but could not be entered, for want
	// of permission.
	Unreadable int
	// EntryLimitReached is true when the walk stopped at Limits.MaxEntries with names left.
	EntryLimitReached bool
	// DepthLimitReached is true when a directory at Limits.MaxDepth was not entered.
	DepthLimitReached bool
}

// Entry is one file or directory a walk found. It is valid only during the callback.
type Entry struct {
	// Path is the entry's path relative to the workspace, slash-separated.
	Path string
	// Name is its last component.
	Name string
	// Depth is 1 for an entry directly in the starting directory (0 when the walk started
	// at a file).
	Depth int
	// Mode is its type and permission bits.
	Mode fs.FileMode
	// Size is its size in bytes.
	Size int64
	// ModTime is its modification time.
	ModTime time.Time

	dirfd int    // the descriptor of the directory holding it, open during the callback
	id    fileID // what the walk found there
}

// IsDir reports whether the entry is a directory.
func (e Entry) IsDir() bool { return e.Mode.IsDir() }

// Open opens the entry, a regular file, for reading, through its directory's descriptor
// with O_NOFOLLOW, and refuses it (SwappedError) when it is no longer the file the walk
// found. Call it during the callback only; the caller closes the file.
func (e Entry) Open() (*os.File, error) {
	if !e.Mode.IsRegular() {
		return nil, &NotRegularError{Path: e.Path, Kind: kindOf(e.Mode)}
	}
	fd, err := unix.Openat(e.dirfd, e.Name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		if changed(err) {
			return nil, &SwappedError{Path: e.Path}
		}
		return nil, fmt.Errorf("confine: open %q: %w", e.Path, err)
	}
	if checkID(fd, e.id, unix.S_IFREG) != nil {
		unix.Close(fd)
		return nil, &SwappedError{Path: e.Path}
	}
	return os.NewFile(uintptr(fd), e.Path), nil
}

// WalkFunc is called for each entry of a walk, in name order within a directory, a
// directory before what it holds. Returning fs.SkipDir from a directory's call skips what
// it holds; fs.SkipAll ends the walk without an error; any other error ends the walk with
// that error.
type WalkFunc func(Entry) error

// Walk visits the tree at path (relative to cwd, validated as Resolve does) for
// developer.list and developer.search. A symbolic link in the path asked for is a refusal,
// since then there is nothing to list; below it, links are stepped over and counted, never
// followed, and so are protected paths. It is bounded by lim, and the summary reports the
// bounds and whether they cut the walk short. Every directory is entered through its
// parent's descriptor with O_NOFOLLOW and checked to be the directory just listed.
func (r *Root) Walk(cwd, path string, lim Limits, fn WalkFunc) (WalkSummary, error) {
	sum := WalkSummary{Limits: lim.withDefaults()}
	raw, err := r.components(cwd, path)
	if err != nil {
		return sum, err
	}
	rootfd, err := r.openRoot()
	if err != nil {
		return sum, err
	}
	defer unix.Close(rootfd)
	p, err := r.validate(rootfd, path, raw)
	if err != nil {
		return sum, err
	}
	if !p.Exists {
		return sum, &fs.PathError{Op: "walk", Path: p.Rel, Err: fs.ErrNotExist}
	}
	w := &walker{r: r, fn: fn, sum: &sum}
	if !p.Mode.IsDir() {
		// A single file: its directory's descriptor, for Entry.Open.
		dirfd, err := r.openBeneath(rootfd, p.comps[:len(p.comps)-1], unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err == nil && checkID(dirfd, p.parent, unix.S_IFDIR) != nil {
			unix.Close(dirfd)
			err = unix.ENOTDIR
		}
		if err != nil {
			if changed(err) {
				return sum, &SwappedError{Path: path}
			}
			return sum, fmt.Errorf("confine: open the directory of %q: %w", p.Rel, err)
		}
		defer unix.Close(dirfd)
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, p.comps[len(p.comps)-1], &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || idOf(&st) != p.id {
			return sum, &SwappedError{Path: path}
		}
		sum.Entries++
		err = fn(w.entry(dirfd, p.Rel, p.comps[len(p.comps)-1], 0, &st))
		if err == fs.SkipAll || err == fs.SkipDir {
			err = nil
		}
		return sum, err
	}
	dirfd, err := r.openBeneath(rootfd, p.comps, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		if changed(err) {
			return sum, &SwappedError{Path: path}
		}
		return sum, fmt.Errorf("confine: open %q: %w", p.Rel, err)
	}
	if checkID(dirfd, p.id, unix.S_IFDIR) != nil {
		unix.Close(dirfd)
		return sum, &SwappedError{Path: path}
	}
	err = w.dir(dirfd, p.Rel, 1)
	if err == fs.SkipAll || err == errLimit {
		err = nil
	}
	return sum, err
}

// maxDirNames bounds the names read from one directory, whatever the limits: the memory a
// walk of a huge directory takes.
const maxDirNames = 1 << 16

// errLimit ends a walk that reached Limits.MaxEntries.
var errLimit = errors.New("confine: entry limit reached")

// walker is one walk in progress.
type walker struct {
	r        *Root
	fn       WalkFunc
	sum      *WalkSummary
	examined int // names looked at, against Limits.MaxEntries
}

// dir walks the directory open as dirfd (O_RDONLY; dir closes it), whose workspace-relative
// path is rel, reporting its entries at depth.
func (w *walker) dir(dirfd int, rel string, depth int) error {
	f := os.NewFile(uintptr(dirfd), rel)
	defer f.Close()
	// Read the whole directory, up to maxDirNames, so that the names are examined in
	// order and a bounded walk always keeps the same prefix of a large directory.
	var names []string
	for len(names) < maxDirNames {
		batch, err := f.Readdirnames(min(1024, maxDirNames-len(names)))
		names = append(names, batch...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("confine: list %q: %w", rel, err)
		}
	}
	if len(names) == maxDirNames {
		// A directory larger than that is listed in part (the first names the filesystem
		// gave, sorted), and the summary says so.
		w.sum.EntryLimitReached = true
	}
	slices.Sort(names)
	for _, name := range names {
		if w.examined >= w.sum.Limits.MaxEntries {
			w.sum.EntryLimitReached = true
			return errLimit
		}
		w.examined++
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				continue // removed since the listing
			}
			return fmt.Errorf("confine: stat %q: %w", rel+"/"+name, err)
		}
		childRel := name
		if rel != "." {
			childRel = rel + "/" + name
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			w.sum.SkippedLinks++
			continue
		}
		if _, ok := w.r.protectedAt(filepath.Join(w.r.canon, childRel)); ok {
			w.sum.SkippedProtected++
			continue
		}
		w.sum.Entries++
		err := w.fn(w.entry(dirfd, childRel, name, depth, &st))
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		switch {
		case err == fs.SkipDir:
			continue
		case err != nil:
			return err
		case !isDir:
			continue
		case depth >= w.sum.Limits.MaxDepth:
			w.sum.DepthLimitReached = true
			continue
		}
		child, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if changed(err) {
				w.sum.SkippedLinks++ // it became a link, or went, since it was looked at
				continue
			}
			if err == unix.EACCES || err == unix.EPERM {
				w.sum.Unreadable++
				continue
			}
			return fmt.Errorf("confine: open %q: %w", childRel, err)
		}
		if checkID(child, idOf(&st), unix.S_IFDIR) != nil {
			unix.Close(child)
			w.sum.SkippedLinks++
			continue
		}
		if err := w.dir(child, childRel, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// entry builds the Entry for a name in dirfd.
func (w *walker) entry(dirfd int, rel, name string, depth int, st *unix.Stat_t) Entry {
	return Entry{
		Path:    rel,
		Name:    name,
		Depth:   depth,
		Mode:    fileMode(st),
		Size:    st.Size,
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
		dirfd:   dirfd,
		id:      idOf(st),
	}
}
