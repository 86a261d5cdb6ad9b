package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"buddi/agents"
	"buddi/config"
	"buddi/health"
)

// serveStartLimit bounds how long init waits for a buddi serve it started to answer (a first
// start makes the database cluster).
const serveStartLimit = 3 * time.Minute

// firstQuestion is what init asks the default agent once buddi runs.
const firstQuestion = "Say hello to me in one short line."

// startServeInBackground starts `buddi serve` in a session of its own (closing init's
// terminal does not stop it), its output appended to serve.log in the home, and waits until
// it answers. A serve that ends before it answers is an error quoting its log's last lines.
func startServeInBackground(ctx context.Context, cfg config.Config, out io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the buddi binary to start serve: %w", err)
	}
	logPath := filepath.Join(cfg.Home, "serve.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open serve's log %s: %w", logPath, err)
	}
	defer logFile.Close()
	cmd := exec.Command(exe, "serve")
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start buddi serve: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(out, "buddi serve: starting in the background (pid %d, log %s)\n", cmd.Process.Pid, logPath)
	deadline := time.Now().Add(serveStartLimit)
	for {
		if _, err := dialServer(cfg); err == nil {
			fmt.Fprintf(out, "buddi serve: running at http://%s\n", cfg.WebAddr())
			return nil
		}
		select {
		case err := <-exited:
			return &exitError{code: 1, err: fmt.Errorf("buddi serve stopped before it answered (%v); its log %s ends with:\n%s", err, logPath, tail(logPath, 8))}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return &exitError{code: 1, err: fmt.Errorf("buddi serve did not answer within %v: it may still be starting; see %s", serveStartLimit, logPath)}
		}
	}
}

// tail is the last n lines of the file at path, for an error message.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// firstAnswer asks agent, through the running buddi, for a first answer and prints it on one
// line. It waits (30 s at most) for the server's vault to open first: a buddi started before
// init made the key opens its vault by itself within a second or so.
func firstAnswer(ctx context.Context, cfg config.Config, agent agents.Agent, out, errOut io.Writer) error {
	cl, err := dialServer(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var r health.Report
		err := cl.do("GET", "/api/health", nil, &r)
		if err == nil && (r.Vault == nil || r.Vault.Open) {
			break
		}
		if time.Now().After(deadline) {
			why := "it did not answer"
			if err == nil && r.Vault != nil {
				why = r.Vault.Problem
			}
			return &exitError{code: 1, err: fmt.Errorf("the running buddi's vault is still locked (%s): restart buddi serve so it reads the key", why)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	sent, err := cl.send(agent.ID, "", false, true, firstQuestion)
	if err != nil {
		return err
	}
	res, err := cl.follow(ctx, sent.Conversation.ID, sent.RunID, io.Discard, errOut, bufio.NewScanner(strings.NewReader("")), true)
	if err != nil {
		return err
	}
	line := strings.Join(strings.Fields(res.Text), " ")
	if res.Status == "failed" || line == "" {
		return &exitError{code: 1, err: errors.New("the agent did not answer through the running buddi: see `buddi doctor`")}
	}
	fmt.Fprintf(out, "%s (through buddi serve): %s\n", agent.Handle, line)
	return nil
}
