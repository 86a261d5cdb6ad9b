package developer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"buddi/plugins/developer/confine"
	"buddi/sandbox"
)

// ripgrepFlags are the flags every ripgrep run gets. The walk decides which files are
// searched (confined, links stepped over and counted, .gitignore applied), and ripgrep is
// handed those files by name and does no traversal of its own:
//
//   - --no-config: no RIPGREP_CONFIG_PATH, so no flag comes from outside this list (a --pre
//     there would run a program on every file);
//   - --no-follow (§4) and --no-ignore: nothing is followed and no ignore file is read,
//     inside the workspace or above it (the walk has applied .gitignore already);
//   - --threads=1: files are searched in the order given, the walk's order, so the first
//     200 results are the same ones the built-in search finds;
//   - --null, --line-number, --with-filename, --no-heading, --color=never: one parseable
//     line per match, the path ended by a NUL byte whatever it holds;
//   - --max-filesize: the built-in search's bound (the walk skips larger files already).
//
// No --pre, no --search-zip, no --follow: nothing that runs a program or reaches beyond
// the files named. The query goes after -e and the files after --, so neither is read as
// a flag. ripgrep runs with an empty environment, in the workspace directory.
var ripgrepFlags = []string{
	"--no-config",
	"--no-follow",
	"--no-ignore",
	"--threads=1",
	"--null",
	"--line-number",
	"--with-filename",
	"--no-heading",
	"--color=never",
	"--max-filesize=" + strconv.Itoa(maxSearchFile),
}

// Bounds of one ripgrep run.
const (
	// ripgrepBatch bounds the bytes of file names handed to one ripgrep process.
	ripgrepBatch = 96 << 10
	// ripgrepLine bounds what is read of one output line; the text is cut at maxSearchText.
	ripgrepLine = 8 << 10
	// ripgrepStderr bounds what is kept of ripgrep's standard error.
	ripgrepStderr = 4 << 10
)

// ripgrep searches with the ripgrep binary at rg: the walk picks the files, ripgrep reads
// them in batches, and the first maxSearchResults matches are kept.
func (c *searchCall) ripgrep(ctx context.Context, rg string, box *sandbox.Policy) (searchOutcome, treeSummary, error) {
	out := searchOutcome{engine: "ripgrep"}
	var files []string
	_, sum, err := walkTree(ctx, c.s.root, c.args.Path, confine.Limits{MaxEntries: maxWalkNames}, func(e confine.Entry) error {
		if !c.wanted(e) {
			return nil
		}
		if e.Size > maxSearchFile {
			out.large++
			return nil
		}
		files = append(files, e.Path)
		return nil
	})
	if err != nil {
		return out, sum, err
	}
	seen := map[string]bool{}
	for len(files) > 0 && !out.stopped {
		n, size := 0, 0
		for n < len(files) && (n == 0 || size+len(files[n])+1 <= ripgrepBatch) {
			size += len(files[n]) + 1
			n++
		}
		if err := c.ripgrepBatch(ctx, rg, box, files[:n], &out, seen); err != nil {
			return out, sum, err
		}
		files = files[n:]
	}
	return out, sum, nil
}

// ripgrepBatch runs ripgrep once over files, adding its matches to out. ripgrep runs in the
// workspace's box: the walk checked each file, but a name can be swapped for a link between
// the check and ripgrep's open (ripgrep follows a link given as a file), and in the box a link
// to buddi's data or the owner's secrets leads to nothing.
func (c *searchCall) ripgrepBatch(ctx context.Context, rg string, box *sandbox.Policy, files []string, out *searchOutcome, seen map[string]bool) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := append([]string(nil), ripgrepFlags...)
	if c.re == nil {
		args = append(args, "--fixed-strings")
	}
	args = append(args, "-e", c.args.Query, "--")
	args = append(args, files...)
	cmd := exec.CommandContext(runCtx, rg, args...)
	cmd.Dir = c.s.dir()
	cmd.Env = []string{} // nothing of buddi's own: no DATABASE_URL, no BUDDI_*, no key
	stderr := &boundedBuffer{max: ripgrepStderr}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("developer: ripgrep: %w", err)
	}
	if err := sandbox.Start(cmd, *box); err != nil {
		return fmt.Errorf("developer: start ripgrep in its box: %w", err)
	}
	r := bufio.NewReaderSize(stdout, 64<<10)
	var readErr error
	for !out.stopped {
		line, truncated, ok, err := readLine(r, ripgrepLine)
		if err != nil {
			readErr = err
			break
		}
		if !ok {
			break
		}
		path, rest, found := bytes.Cut(line, []byte{0})
		if !found {
			continue // a message such as "binary file matches": not a result
		}
		num, text, found := bytes.Cut(rest, []byte(":"))
		n, err := strconv.Atoi(string(num))
		if !found || err != nil {
			continue
		}
		p := string(path)
		if !seen[p] {
			seen[p] = true
			out.files++
		}
		if !truncated {
			text = bytes.TrimSuffix(text, []byte("\r"))
		}
		t := string(text)
		if truncated && len(t) <= maxSearchText {
			t += " …" // cut by the line bound below the text bound: unlikely, but say so
		}
		out.add(p, n, t)
	}
	stopped := out.stopped
	if stopped {
		cancel() // enough: the rest of this batch is not wanted
	}
	werr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if readErr != nil && !stopped {
		return fmt.Errorf("developer: read ripgrep's output: %w", readErr)
	}
	var exit *exec.ExitError
	switch {
	case werr == nil, stopped:
	case errors.As(werr, &exit) && exit.ExitCode() == 1: // no match
	case errors.As(werr, &exit) && exit.ExitCode() == 2:
		// An error for some file (unreadable, vanished): the matches found stand.
		if msg := oneLine(stderr.String()); msg != "" && out.note == "" {
			out.note, _ = cut(msg, 300)
		}
	default:
		return fmt.Errorf("developer: ripgrep: %w: %s", werr, oneLine(stderr.String()))
	}
	return nil
}

// boundedBuffer keeps the first max bytes written to it and drops the rest.
type boundedBuffer struct {
	max int
	buf bytes.Buffer
}

// Write keeps what fits and reports the whole write as done.
func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns what was kept.
func (b *boundedBuffer) String() string { return strings.TrimSpace(b.buf.String()) }
