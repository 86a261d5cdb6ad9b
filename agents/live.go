package agents

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Live is a catalogue kept in step with the owner's directories: it parses the files once and
// again only after one of them changed, as a file watcher (fsnotify) reports, so a run reads
// its agent and skills from memory and an edited file still applies to the next run. Where no
// watch can be set (the directories and their parents are missing, or the system refuses a
// watch), every Load reads the disk, as without a watcher: a change is never missed.
type Live struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	cat    *Catalog
	err    error
	loaded bool // cat and err are current
	w      *fsnotify.Watcher
	roots  []string // the owner's directories
	closed bool     // Close was called: the watch's end is no failure

	changes chan struct{} // one pending signal after a change
}

// NewLive returns a live catalogue over cfg's directories; Run keeps it current, Close ends
// its watch. A nil log discards.
func NewLive(cfg Config, log *slog.Logger) *Live {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Live{cfg: cfg, log: log, changes: make(chan struct{}, 1)}
	for _, d := range []string{cfg.AgentsDir, cfg.SkillsDir} {
		if d != "" {
			l.roots = append(l.roots, filepath.Clean(d))
		}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("agent files are not watched; they are read at every run", "err", err)
		return l
	}
	l.w = w
	for _, root := range l.roots {
		if err := l.watchRoot(root); err != nil {
			log.Warn("agent files are not watched; they are read at every run", "dir", root, "err", err)
			_ = w.Close()
			l.w = nil
			break
		}
	}
	return l
}

// watchRoot watches root and every directory under it, or, while root does not exist, its
// parent (so its creation is seen).
func (l *Live) watchRoot(root string) error {
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		parent := filepath.Dir(root)
		if _, err := os.Stat(parent); err != nil {
			return fmt.Errorf("neither %s nor its parent exists", root)
		}
		return l.add(parent)
	}
	return l.watchTree(root)
}

// watchTree watches dir and the directories under it.
func (l *Live) watchTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile: its removal is an event of its own
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		return l.add(p)
	})
}

// add watches one directory.
func (l *Live) add(dir string) error {
	l.mu.Lock()
	w := l.w
	l.mu.Unlock()
	if w == nil {
		return nil
	}
	return w.Add(dir)
}

// Load returns the catalogue: the one parsed last, unless a file changed since.
func (l *Live) Load() (*Catalog, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded && l.w != nil {
		return l.cat, l.err
	}
	l.cat, l.err = Load(l.cfg)
	l.loaded = true
	return l.cat, l.err
}

// Changes signals after the owner's files changed (at most one signal waits).
func (l *Live) Changes() <-chan struct{} { return l.changes }

// Run follows the watch until ctx ends: each change marks the catalogue for a new parse and
// signals Changes. It returns nil at ctx's end, and an error when the watch fails (its
// supervisor starts it again; meanwhile every Load reads the disk).
func (l *Live) Run(ctx context.Context) error {
	l.mu.Lock()
	w := l.w
	l.mu.Unlock()
	if w == nil {
		<-ctx.Done()
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return l.ended(ctx)
			}
			l.saw(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return l.ended(ctx)
			}
			// An overflow drops events: what changed is unknown, so everything is read again.
			l.log.Warn("the agent files' watch lost events; they are read again", "err", err)
			l.stale()
		}
	}
}

// ended is the watch's channels closing. After Close (buddi stopping) that is no failure:
// Run waits, quietly, for its own end, so its supervisor neither restarts it nor logs a
// failure. Otherwise the watch failed.
func (l *Live) ended(ctx context.Context) error {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		<-ctx.Done()
		return nil
	}
	return l.broken(errors.New("the watch closed"))
}

// broken leaves the catalogue reading the disk at every Load, and says why.
func (l *Live) broken(err error) error {
	l.mu.Lock()
	l.w = nil
	l.mu.Unlock()
	l.stale()
	return err
}

// saw takes one event: a new directory under a root is watched too, a root that appears is
// watched from now on, and the catalogue is read again at its next Load.
func (l *Live) saw(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(name); err == nil && fi.IsDir() && l.relevant(name) {
			if err := l.watchTree(name); err != nil {
				l.log.Warn("a new agent directory is not watched", "dir", name, "err", err)
			}
		}
	}
	if !l.relevant(name) {
		return // another file in a root's parent
	}
	l.stale()
}

// relevant reports whether p is a root or inside one.
func (l *Live) relevant(p string) bool {
	for _, root := range l.roots {
		if p == root {
			return true
		}
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func (l *Live) stale() {
	l.mu.Lock()
	l.loaded = false
	l.mu.Unlock()
	select {
	case l.changes <- struct{}{}:
	default:
	}
}

// Close ends the watch.
func (l *Live) Close() error {
	l.mu.Lock()
	w := l.w
	l.w, l.closed = nil, true
	l.mu.Unlock()
	if w == nil {
		return nil
	}
	return w.Close()
}
