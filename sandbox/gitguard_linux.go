package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// quarantineSuffix is added to the name of what is moved aside.
const quarantineSuffix = ".quarantined-by-buddi-"

// gitGuard is one box's hold on its workspace's git places: the workspace open, what the
// scan found before the box was made, the read-only paths that were missing then, and
// whether it holds the workspace's .git placeholder.
type gitGuard struct {
	root      int    // the workspace, O_PATH
	workspace string // its real path
	before    scan
	missing   []string // read-only paths inside the workspace, relative, missing at the start
	held      bool     // holds a reference on the placeholder
}

// placeholders counts, per workspace (its real path), the boxes running that keep its .git
// read-only: while any does, <workspace>/.git exists (an empty directory made for them
// when there was none), and the last to end removes it if it is still empty.
var placeholders = struct {
	sync.Mutex
	held map[string]int
}{held: map[string]int{}}

// guardGit prepares the git guard of a box of p, whose workspace's real path is ws (checked
// by prepare): it opens the workspace, makes sure its .git
// exists unless the box writes it (an empty directory the launcher mounts read-only, so that
// no repository can be made there), and scans the workspace for the other places git would
// take for a repository.
func guardGit(ws string, p Policy) (*gitGuard, error) {
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: open the workspace %s: %w", ws, err)
	}
	g := &gitGuard{root: root, workspace: ws}
	if !p.GitWritable {
		if err := g.hold(); err != nil {
			_ = unix.Close(root)
			return nil, err
		}
	}
	g.before = scanGit(root)
	for _, r := range p.ReadOnly {
		rel, ok := relTo(r, p.Workspace, ws)
		if !ok {
			continue
		}
		if fd, err := openBeneath(root, rel, unix.O_PATH); err == nil {
			_ = unix.Close(fd)
		} else if errors.Is(err, unix.ENOENT) {
			g.missing = append(g.missing, rel)
		}
	}
	return g, nil
}

// hold takes a reference on the workspace's .git placeholder, making it when the workspace
// has no .git at all.
func (g *gitGuard) hold() error {
	placeholders.Lock()
	defer placeholders.Unlock()
	err := unix.Mkdirat(g.root, ".git", 0o755)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("sandbox: make room to keep %s/.git read-only: %w", g.workspace, err)
	}
	placeholders.held[g.workspace]++
	g.held = true
	return nil
}

// release lets go of the placeholder; the last box of the workspace to end removes its .git
// if that is an empty directory (the placeholder, or one left by a buddi that died): an
// empty .git is no repository, and a repository made there since is not empty.
func (g *gitGuard) release() {
	if !g.held {
		return
	}
	g.held = false
	placeholders.Lock()
	defer placeholders.Unlock()
	placeholders.held[g.workspace]--
	if placeholders.held[g.workspace] > 0 {
		return
	}
	delete(placeholders.held, g.workspace)
	_ = unix.Unlinkat(g.root, ".git", unix.AT_REMOVEDIR) // refused unless an empty directory
}

// finish is the end of the box: every git place found now that was not there, the same,
// before the box was made is quarantined, and so is every read-only path that was missing
// then and is there now; then the placeholder is let go of.
func (g *gitGuard) finish() Report {
	defer unix.Close(g.root)
	defer g.release()
	var r Report
	after := scanGit(g.root)
	switch {
	case after.partial != "":
		r.Unchecked = after.partial
	case g.before.partial != "":
		r.Unchecked = "before the command: " + g.before.partial
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, e := range after.entries {
		if g.known(e) {
			continue
		}
		r.Quarantined = append(r.Quarantined, g.quarantine(e.Rel, e.Kind.String(), e.Kind == gitBare, stamp))
	}
	for _, rel := range g.missing {
		if fd, err := openBeneath(g.root, rel, unix.O_PATH); err == nil {
			_ = unix.Close(fd)
			r.Quarantined = append(r.Quarantined, g.quarantine(rel, "a hooks directory", false, stamp))
		} else if errors.Is(err, unix.ELOOP) {
			// A link where the hooks directory should be: moved aside all the same.
			r.Quarantined = append(r.Quarantined, g.quarantine(rel, "a hooks directory", false, stamp))
		}
	}
	return r
}

// known reports whether e was there, the same, before the box was made.
func (g *gitGuard) known(e gitEntry) bool {
	for _, b := range g.before.entries {
		if b.same(e) {
			return true
		}
	}
	return false
}

// quarantine moves rel aside (for a bare repository: its HEAD), never following a link, and
// says how it went.
func (g *gitGuard) quarantine(rel, what string, bare bool, stamp string) Quarantined {
	q := Quarantined{Path: filepath.Join(g.workspace, rel), What: what}
	dir, name := parentOf(rel)
	if bare {
		dir, name = rel, "HEAD"
		q.What += " (its HEAD renamed)"
	}
	dfd, err := openBeneath(g.root, dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		q.Err = fmt.Sprintf("its directory could not be opened: %v", err)
		return q
	}
	defer unix.Close(dfd)
	for i := 1; i <= 100; i++ {
		to := name + quarantineSuffix + stamp
		if i > 1 {
			to += fmt.Sprintf("-%d", i)
		}
		err = unix.Renameat2(dfd, name, dfd, to, unix.RENAME_NOREPLACE)
		if err == nil {
			q.Moved = filepath.Join(g.workspace, dir, to)
			return q
		}
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	q.Err = err.Error()
	return q
}

// finishOnExit calls Finish once the process pid has exited, for a caller of Start, which
// does not.
func (l *Launched) finishOnExit(pid int) {
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		l.Finish()
		return
	}
	go func() {
		defer unix.Close(pfd)
		for {
			fds := []unix.PollFd{{Fd: int32(pfd), Events: unix.POLLIN}}
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				break
			}
		}
		l.Finish()
	}()
}

// sizeOK keeps a launch that lists too many git places from being refused at encode time
// with a sentence that says nothing of them.
func (g *gitGuard) sizeOK() error {
	if n := len(g.before.entries); n > 10_000 {
		return fmt.Errorf("sandbox: the workspace %s holds %d repositories (.git entries or bare repositories); a box keeps at most 10000 read-only: remove some", g.workspace, n)
	}
	return nil
}

// relTo returns path relative to the first of dirs it lies strictly inside.
func relTo(path string, dirs ...string) (string, bool) {
	for _, d := range dirs {
		if path != d && within(path, d) {
			return strings.TrimPrefix(path, d+"/"), true
		}
	}
	return "", false
}
