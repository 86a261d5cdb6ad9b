package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"buddi/internal/text"
	"buddi/plugins"
)

// The bounds of host.exec.
const (
	// DefaultTimeout bounds a script whose call names no timeout_s.
	DefaultTimeout = 2 * time.Minute
	// MaxTimeout is the largest timeout_s a call may ask for.
	MaxTimeout = 10 * time.Minute
	// MaxScript bounds the script, in bytes: it is passed as one argument (Linux allows
	// 128 KiB for one).
	MaxScript = 100_000
	// grace is the time between SIGTERM and SIGKILL when a script's group is stopped.
	grace = 2 * time.Second
)

// languages maps a call's language to the interpreter looked up on the script's PATH and
// the flag that takes the script as an argument.
var languages = map[string]struct{ program, flag string }{
	"bash":   {"bash", "-c"},
	"python": {"python3", "-c"},
}

// execTool is host.exec.
type execTool struct{ deps Deps }

var (
	_ plugins.Tool             = (*execTool)(nil)
	_ plugins.DispatchReporter = (*execTool)(nil)
)

// Spec declares host.exec: gated, reusable, and able to run anything the host user can.
func (t *execTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".exec",
		Description: "Run a Bash or Python script on the owner's machine, as the owner's user, with a clean environment (PATH, HOME, LANG). " +
			"You get the exit code and the last 64 KB of stdout and of stderr. It is not sandboxed: the owner approves each script unless they allowed it for this conversation or for you. " +
			"Stay within the task.",
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"language":  {"type": "string", "enum": ["bash", "python"], "description": "bash runs the script with bash -c, python with python3 -c."},
				"script":    {"type": "string", "minLength": 1, "maxLength": %d, "description": "The whole script."},
				"cwd":       {"type": "string", "maxLength": 4096, "description": "The absolute directory to run in; it must exist. Default: the home directory."},
				"timeout_s": {"type": "integer", "minimum": 1, "maximum": %d, "description": "Stop the script (its whole process group) after this many seconds. Default %d."}
			},
			"required": ["language", "script"],
			"additionalProperties": false
		}`, MaxScript, int(MaxTimeout/time.Second), int(DefaultTimeout/time.Second))),
		Effects:          []plugins.Effect{plugins.EffectExec, plugins.EffectFSWrite, plugins.EffectNetRead, plugins.EffectNetWrite},
		Tier:             plugins.TierGated,
		Timeout:          MaxTimeout + time.Minute, // room for the script's own timeout to stop it in order
		ReusableApproval: true,
	}
}

// ReportsDispatch is true: Execute says when the script starts, so a call stopped before
// that is known not to have run.
func (t *execTool) ReportsDispatch() bool { return true }

// execArgs are host.exec's arguments.
type execArgs struct {
	Language string `json:"language"`
	Script   string `json:"script"`
	Cwd      string `json:"cwd"`
	TimeoutS int    `json:"timeout_s"`
}

// prepared is a call checked and resolved: what runs, where, for how long.
type prepared struct {
	args        execArgs
	interpreter string // the absolute path of bash or python3
	flag        string
	dir         string
	timeout     time.Duration
}

// prepare reads and checks a call's arguments and finds its interpreter; an error is a
// sentence for the model.
func (t *execTool) prepare(call plugins.Call) (prepared, error) {
	var p prepared
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p.args); err != nil {
		return p, fmt.Errorf("host.exec: the arguments cannot be read: %w", err)
	}
	lang, ok := languages[p.args.Language]
	if !ok {
		return p, fmt.Errorf("host.exec: language must be bash or python, not %q", p.args.Language)
	}
	if strings.TrimSpace(p.args.Script) == "" {
		return p, errors.New("host.exec: the script is empty")
	}
	if len(p.args.Script) > MaxScript {
		return p, fmt.Errorf("host.exec: the script is %d bytes, more than the %d allowed", len(p.args.Script), MaxScript)
	}
	if strings.ContainsRune(p.args.Script, 0) {
		return p, errors.New("host.exec: the script holds a NUL byte, which cannot be passed to a program")
	}
	p.dir = t.deps.Home
	if p.args.Cwd != "" {
		if !filepath.IsAbs(p.args.Cwd) {
			return p, fmt.Errorf("host.exec: cwd %q is not an absolute path", p.args.Cwd)
		}
		p.dir = filepath.Clean(p.args.Cwd)
	}
	if fi, err := os.Stat(p.dir); err != nil {
		return p, fmt.Errorf("host.exec: the directory %s cannot be used: %w", p.dir, err)
	} else if !fi.IsDir() {
		return p, fmt.Errorf("host.exec: %s is not a directory", p.dir)
	}
	p.timeout = DefaultTimeout
	if p.args.TimeoutS != 0 {
		if p.args.TimeoutS < 1 || time.Duration(p.args.TimeoutS)*time.Second > MaxTimeout {
			return p, fmt.Errorf("host.exec: timeout_s must be between 1 and %d", int(MaxTimeout/time.Second))
		}
		p.timeout = time.Duration(p.args.TimeoutS) * time.Second
	}
	path, err := lookPath(lang.program, t.deps.Path)
	if err != nil {
		return p, err
	}
	p.interpreter, p.flag = path, lang.flag
	return p, nil
}

// Describe renders the card: a summary naming the language and the script's first line, and
// a preview holding the whole script with where, as whom and for how long it runs.
func (t *execTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	p, err := t.prepare(call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	first := text.FirstLine(strings.TrimLeft(p.args.Script, " \t\r\n"))
	if r := []rune(first); len(r) > 100 {
		first = string(r[:99]) + "…"
	}
	sum := sha256.Sum256([]byte(p.args.Script))
	preview := fmt.Sprintf("Run %s on the host as %s, in %s, for at most %s.\nNot sandboxed: it can change any file %s can, and reach the network.\n\n%s",
		p.args.Language, t.deps.User, p.dir, p.timeout, t.deps.User, p.args.Script)
	return plugins.Envelope{
		Summary: fmt.Sprintf("Run %s on the host: %s", p.args.Language, first),
		Effects: t.Spec().Effects,
		Targets: []string{p.dir},
		Detail: map[string]any{
			"language":      p.args.Language,
			"interpreter":   p.interpreter,
			"script":        p.args.Script,
			"script_sha256": hex.EncodeToString(sum[:]),
			"cwd":           p.dir,
			"timeout_s":     int(p.timeout / time.Second),
			"user":          t.deps.User,
		},
		Preview: preview,
	}, nil
}

// outcome is the structured result of one script, for the canvas.
type outcome struct {
	ExitCode      int    `json:"exit_code"`
	Signal        string `json:"signal,omitempty"`
	TimedOut      bool   `json:"timed_out,omitempty"`
	ElapsedMS     int64  `json:"elapsed_ms"`
	StdoutDropped int64  `json:"stdout_dropped,omitempty"`
	StderrDropped int64  `json:"stderr_dropped,omitempty"`
}

// Execute runs the script. A script that exits non-zero or runs out of time is a result
// marked as an error, with its output; a cancelled call is an error.
func (t *execTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	p, err := t.prepare(call)
	if err != nil {
		return plugins.Result{}, err
	}
	if err := plugins.Dispatch(ctx); err != nil {
		return plugins.Result{}, fmt.Errorf("host.exec: not started: %w", err)
	}
	r, err := run(ctx, command{
		path: p.interpreter, args: []string{filepath.Base(p.interpreter), p.flag, p.args.Script},
		dir: p.dir, env: t.deps.env(), timeout: p.timeout, grace: grace,
	})
	if err != nil {
		return plugins.Result{}, err
	}
	out := outcome{ExitCode: r.exitCode, TimedOut: r.timedOut, ElapsedMS: r.elapsed.Milliseconds(),
		StdoutDropped: r.stdout.dropped, StderrDropped: r.stderr.dropped}
	if r.signal != 0 {
		out.Signal = r.signal.String()
	}
	data, _ := json.Marshal(out)
	res := plugins.Result{Text: report(p, r), Data: data, IsError: r.exitCode != 0 || r.timedOut}
	if r.cancelled {
		return res, fmt.Errorf("host.exec: stopped before it finished (its process group was killed): %w", context.Cause(ctx))
	}
	return res, nil
}

// report is the result for the model: how the script ended, then each stream, saying how
// much of it was cut.
func report(p prepared, r ran) string {
	var b strings.Builder
	switch {
	case r.timedOut:
		fmt.Fprintf(&b, "Stopped after %s (timeout_s): its process group was killed.", p.timeout)
	case r.signal != 0:
		fmt.Fprintf(&b, "Killed by %s after %s.", r.signal, r.elapsed.Round(time.Millisecond))
	default:
		fmt.Fprintf(&b, "Exit code %d after %s.", r.exitCode, r.elapsed.Round(time.Millisecond))
	}
	if r.held {
		b.WriteString(" A process it started outside its group kept its output open; output after the script ended is not shown.")
	}
	for _, s := range []struct {
		name string
		out  stream
	}{{"stdout", r.stdout}, {"stderr", r.stderr}} {
		switch {
		case s.out.dropped > 0:
			fmt.Fprintf(&b, "\n--- %s (cut: the first %d bytes were dropped, the last %d are shown) ---\n%s", s.name, s.out.dropped, len(s.out.text), s.out.text)
		case s.out.text == "":
			fmt.Fprintf(&b, "\n--- %s: empty ---", s.name)
		default:
			fmt.Fprintf(&b, "\n--- %s ---\n%s", s.name, s.out.text)
		}
	}
	return b.String()
}

// lookPath finds program in the absolute directories of path; relative entries (an empty
// one means the current directory) are never searched.
func lookPath(program, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		full := filepath.Join(dir, program)
		if fi, err := os.Stat(full); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return full, nil
		}
	}
	return "", fmt.Errorf("host.exec: %s is not installed on this machine (not found on PATH %s)", program, path)
}
