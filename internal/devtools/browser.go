package devtools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// PipeFlag is the flag Start adds: the browser reads commands on its descriptor 3 and
// writes answers and events on its descriptor 4.
const PipeFlag = "--remote-debugging-pipe"

// closeWait is how long Close lets the browser end by itself before it kills it.
const closeWait = 5 * time.Second

// Browser is a browser process and its DevTools connection.
type Browser struct {
	cmd  *exec.Cmd
	conn *Conn
	out  *tail

	exited  chan struct{} // closed once the process has been waited for
	waitErr error         // the process's end, set before exited is closed

	closeOnce sync.Once
	closeErr  error
}

// Start starts cmd, a browser's command line (Path absolute, Args its argv with the page
// to open last), with its DevTools pipe: PipeFlag is put first among its flags and the
// pipe's ends are its ExtraFiles, which become its descriptors 3 and 4. Its output, when
// cmd sets none, is kept for the errors (the last few lines). cmd.WaitDelay, when unset, is
// a few seconds, for a browser's helper processes that outlive it holding its output.
//
// start starts the command; nil is cmd.Start. A caller that wraps the launch (a sandbox)
// rewrites and starts cmd there, passing the ExtraFiles it finds on as descriptors 3 and 4.
// Its error is returned as it is, after the process, if one started, has been waited for.
func Start(cmd *exec.Cmd, start func(*exec.Cmd) error) (*Browser, error) {
	if len(cmd.Args) == 0 {
		cmd.Args = []string{cmd.Path}
	}
	if !slices.Contains(cmd.Args[1:], PipeFlag) {
		cmd.Args = slices.Insert(cmd.Args, 1, PipeFlag)
	}
	if len(cmd.ExtraFiles) != 0 {
		return nil, errors.New("devtools: the browser's descriptors 3 and 4 are its pipe: the command must have no other ExtraFiles")
	}
	b := &Browser{cmd: cmd, exited: make(chan struct{})}
	if cmd.Stdout == nil && cmd.Stderr == nil {
		b.out = &tail{max: 4096}
		cmd.Stdout, cmd.Stderr = b.out, b.out
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = closeWait
	}
	// Commands go down one pipe (the browser's 3), answers come up the other (its 4).
	childR, parentW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("devtools: make the command pipe: %w", err)
	}
	parentR, childW, err := os.Pipe()
	if err != nil {
		childR.Close()
		parentW.Close()
		return nil, fmt.Errorf("devtools: make the answer pipe: %w", err)
	}
	cmd.ExtraFiles = []*os.File{childR, childW}
	if start == nil {
		start = (*exec.Cmd).Start
	}
	err = start(cmd)
	// The browser has its own copies of its ends now, or never will.
	childR.Close()
	childW.Close()
	if err != nil {
		parentR.Close()
		parentW.Close()
		if cmd.Process != nil {
			_ = cmd.Wait()
		}
		return nil, err
	}
	b.conn = NewConn(parentR, parentW)
	go func() {
		b.waitErr = cmd.Wait()
		close(b.exited)
	}()
	return b, nil
}

// Conn is the browser's DevTools connection.
func (b *Browser) Conn() *Conn { return b.conn }

// Pid is the browser's process id.
func (b *Browser) Pid() int { return b.cmd.Process.Pid }

// Exited is closed once the browser's process has ended and been waited for.
func (b *Browser) Exited() <-chan struct{} { return b.exited }

// call is Conn.Call, with the browser's end in the error when the connection is gone.
func (b *Browser) call(ctx context.Context, session, method string, params, result any) error {
	err := b.conn.Call(ctx, session, method, params, result)
	if errors.Is(err, ErrClosed) {
		return b.gone(err)
	}
	return err
}

// gone adds how the browser ended, and the last of what it wrote, to err.
func (b *Browser) gone(err error) error {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-b.exited:
	case <-t.C:
		return err
	}
	why := "the browser exited"
	if b.waitErr != nil {
		why += " (" + b.waitErr.Error() + ")"
	}
	if b.out != nil {
		if last := b.out.lastLine(); last != "" {
			why += ": " + last
		}
	}
	return fmt.Errorf("%w: %s", err, why)
}

// Close asks the browser to close (Browser.close), kills it if it has not ended within a
// few seconds, waits for it and closes the connection. It is safe to call more than once.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		defer cancel()
		_ = b.conn.Call(ctx, "", "Browser.close", nil, nil)
		select {
		case <-b.exited:
		case <-ctx.Done():
			_ = b.cmd.Process.Kill()
			<-b.exited
		}
		b.closeErr = b.conn.Close()
	})
	return b.closeErr
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lastLine is the last line written that is not empty.
func (t *tail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	return strings.TrimSpace(string(lines[len(lines)-1]))
}
