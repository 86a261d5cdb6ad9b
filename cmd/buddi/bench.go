package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"buddi/health"
	"buddi/surfaces/webauth"
)

type benchCmd struct {
	Start benchStartCmd `cmd:"" help:"Start buddi on fresh and on used data directories and report medians."`
}

type benchStartCmd struct {
	Runs int           `default:"5" help:"How many cold and warm starts to measure."`
	Idle time.Duration `default:"3s" help:"How long buddi idles before its RSS is read."`
	JSON bool          `help:"Print the figures as JSON."`
}

// benchResult is what bench start reports, each figure the median of the runs.
type benchResult struct {
	Runs          int     `json:"runs"`
	ColdStartMs   float64 `json:"cold_start_ms"`
	WarmStartMs   float64 `json:"warm_start_ms"`
	IdleRSSMB     float64 `json:"idle_rss_mb"`
	StopMs        float64 `json:"stop_ms"`
	ColdStartsMs  []int64 `json:"cold_starts_ms"`
	WarmStartsMs  []int64 `json:"warm_starts_ms"`
	IdleRSSesKB   []int64 `json:"idle_rsses_kb"`
	StopsMs       []int64 `json:"stops_ms"`
	DatabaseShape string  `json:"database"`
}

func (c benchStartCmd) Run(env *runEnv) error {
	if c.Runs < 1 {
		return &exitError{code: 2, err: errors.New("--runs must be at least 1")}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	res := benchResult{Runs: c.Runs, DatabaseShape: "embedded"}
	if os.Getenv("DATABASE_URL") != "" {
		res.DatabaseShape = "url"
	}
	for i := range c.Runs {
		home, err := os.MkdirTemp("", "buddi-bench-")
		if err != nil {
			return err
		}
		cold, _, stop1, err := benchOnce(env.ctx, self, home, 0)
		if err == nil {
			var warm, rss, stop2 int64
			warm, rss, stop2, err = benchOnce(env.ctx, self, home, c.Idle)
			res.WarmStartsMs = append(res.WarmStartsMs, warm)
			res.IdleRSSesKB = append(res.IdleRSSesKB, rss)
			res.StopsMs = append(res.StopsMs, stop1, stop2)
		}
		os.RemoveAll(home)
		if err != nil {
			return fmt.Errorf("bench run %d: %w", i+1, err)
		}
		res.ColdStartsMs = append(res.ColdStartsMs, cold)
		if !c.JSON {
			fmt.Fprintf(env.stderr, "run %d/%d: cold %d ms, warm %d ms, idle RSS %.1f MB\n", i+1, c.Runs, cold, res.WarmStartsMs[i], float64(res.IdleRSSesKB[i])/1024)
		}
	}
	res.ColdStartMs = median(res.ColdStartsMs)
	res.WarmStartMs = median(res.WarmStartsMs)
	res.IdleRSSMB = median(res.IdleRSSesKB) / 1024
	res.StopMs = median(res.StopsMs)
	if c.JSON {
		return writeJSON(env, res)
	}
	fmt.Fprintf(env.stdout, "medians of %d runs (%s database):\n  first start to healthy  %7.0f ms\n  warm start to healthy   %7.0f ms\n  idle RSS after start    %7.1f MB\n  stop on SIGTERM         %7.0f ms\n",
		res.Runs, res.DatabaseShape, res.ColdStartMs, res.WarmStartMs, res.IdleRSSMB, res.StopMs)
	return nil
}

// benchOnce starts buddi serve on home, times it to a healthy /api/health, reads its RSS after
// idling, and stops it with SIGTERM.
func benchOnce(ctx context.Context, self, home string, idle time.Duration) (startMs, rssKB, stopMs int64, err error) {
	port, err := freePort()
	if err != nil {
		return 0, 0, 0, err
	}
	logf, err := os.Create(filepath.Join(home, "bench-serve.log"))
	if err != nil {
		return 0, 0, 0, err
	}
	defer logf.Close()
	cmd := exec.Command(self, "serve", "--log-level=warn")
	cmd.Env = append(os.Environ(), "BUDDI_HOME="+home, "BUDDI_WEB_PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logf, logf
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if err != nil { // stop it in order, so its postgres stops too; kill only if it hangs
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/api/health", port)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if ok := healthy(ctx, url, home); ok {
			break
		}
		select {
		case e := <-exited:
			exited <- e
			return 0, 0, 0, fmt.Errorf("buddi serve exited before it was healthy (%v); see %s", e, logf.Name())
		case <-ctx.Done():
			return 0, 0, 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, 0, 0, fmt.Errorf("buddi serve was not healthy within 2 minutes; see %s", logf.Name())
		}
	}
	startMs = time.Since(t0).Milliseconds()
	if idle > 0 {
		select {
		case <-time.After(idle):
		case <-ctx.Done():
			return 0, 0, 0, ctx.Err()
		}
		if rssKB, err = rss(cmd.Process.Pid); err != nil {
			return 0, 0, 0, err
		}
	}
	t1 := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case e := <-exited:
		if e != nil {
			return 0, 0, 0, fmt.Errorf("buddi serve exited with %v on SIGTERM; see %s", e, logf.Name())
		}
	case <-time.After(time.Minute):
		return 0, 0, 0, errors.New("buddi serve did not stop within a minute of SIGTERM")
	}
	return startMs, rssKB, time.Since(t1).Milliseconds(), nil
}

// healthy asks url for health with the command line's token of home (which buddi serve
// writes at its start: until then nothing is healthy).
func healthy(ctx context.Context, url, home string) bool {
	token, err := webauth.ReadCLIToken(home)
	if err != nil {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var rep health.Report
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&rep) == nil && rep.Status == "ok"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// rss reads a process's resident set size in KiB from /proc.
func rss(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

func median(xs []int64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}
