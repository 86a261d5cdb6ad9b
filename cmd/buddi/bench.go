package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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

	"github.com/jackc/pgx/v5"

	"buddi/config"
	"buddi/dbsource"
	"buddi/health"
	"buddi/pgcluster"
	"buddi/surfaces/webauth"
)

type benchCmd struct {
	Start benchStartCmd `cmd:"" help:"Start buddi on fresh and on used data directories and report medians."`
	Idle  benchIdleCmd  `cmd:"" help:"Start buddi on a fresh data directory, leave it idle, and report its database transactions a second and its CPU."`
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
	s, err := startBenchServe(ctx, self, home)
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		if err != nil { // stop it in order, so its postgres stops too
			_, _ = s.stop()
		}
	}()
	startMs = s.started.Milliseconds()
	if idle > 0 {
		select {
		case <-time.After(idle):
		case <-ctx.Done():
			return 0, 0, 0, ctx.Err()
		}
		if rssKB, err = rss(s.cmd.Process.Pid); err != nil {
			return 0, 0, 0, err
		}
	}
	stopped, err := s.stop()
	if err != nil {
		return 0, 0, 0, err
	}
	return startMs, rssKB, stopped.Milliseconds(), nil
}

// benchServe is a buddi serve the bench started, healthy.
type benchServe struct {
	cmd     *exec.Cmd
	exited  chan error
	logPath string
	home    string
	started time.Duration // from the start to a healthy /api/health
}

// startBenchServe starts buddi serve on home (on a free port, logging warnings to
// home/bench-serve.log) and waits until /api/health is ok.
func startBenchServe(ctx context.Context, self, home string) (*benchServe, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(home, "bench-serve.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s := &benchServe{cmd: exec.Command(self, "serve", "--log-level=warn"), exited: make(chan error, 1), logPath: logf.Name(), home: home}
	s.cmd.Env = append(os.Environ(), "BUDDI_HOME="+home, "BUDDI_WEB_PORT="+strconv.Itoa(port))
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	t0 := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- s.cmd.Wait() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/api/health", port)
	deadline := time.Now().Add(2 * time.Minute)
	for !healthy(ctx, url, home) {
		var err error
		select {
		case e := <-s.exited:
			s.exited <- e
			return nil, fmt.Errorf("buddi serve exited before it was healthy (%v); see %s", e, s.logPath)
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(10 * time.Millisecond):
			if time.Now().After(deadline) {
				err = fmt.Errorf("buddi serve was not healthy within 2 minutes; see %s", s.logPath)
			}
		}
		if err != nil {
			_, _ = s.stop()
			return nil, err
		}
	}
	s.started = time.Since(t0)
	return s, nil
}

// stop sends SIGTERM and waits for the exit (a minute, then it kills buddi), returning how
// long the stop took.
func (s *benchServe) stop() (time.Duration, error) {
	t0 := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case e := <-s.exited:
		s.exited <- e
		if e != nil {
			return 0, fmt.Errorf("buddi serve exited with %v on SIGTERM; see %s", e, s.logPath)
		}
		return time.Since(t0), nil
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		s.exited <- <-s.exited
		return 0, fmt.Errorf("buddi serve did not stop within a minute of SIGTERM; see %s", s.logPath)
	}
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

type benchIdleCmd struct {
	For        time.Duration `default:"30s" help:"How long to sample buddi while it idles."`
	Settle     time.Duration `default:"10s" help:"How long buddi idles once healthy before sampling begins (its start-up work and first periodic jobs)."`
	Statements bool          `help:"Log every statement while sampling and list the transactions by where they come from."`
	JSON       bool          `help:"Print the figures as JSON."`
}

// idleResult is what bench idle reports; rates are per second of the sampled window.
type idleResult struct {
	Seconds       float64       `json:"seconds"`
	Transactions  float64       `json:"transactions_per_s"` // commits and rollbacks in buddi's database
	Commits       float64       `json:"commits_per_s"`
	Rollbacks     float64       `json:"rollbacks_per_s"`
	Writes        float64       `json:"write_transactions_per_s"` // transactions that took a transaction id
	WALFlushes    float64       `json:"wal_flushes_per_s"`        // -1: the server does not count them
	BuddiCPU      float64       `json:"buddi_cpu_percent"`        // of one core
	PostgresCPU   float64       `json:"postgres_cpu_percent"`     // the server and its backends, of one core
	RSSMB         float64       `json:"rss_mb"`
	BySource      []sourceCount `json:"by_source,omitempty"`
	StatementsLog string        `json:"-"`
}

// sourceCount is how many transactions one source made a second: the connection's
// application_name and the first line of the transaction's first statement.
type sourceCount struct {
	App       string  `json:"app"`
	Statement string  `json:"statement"`
	PerSecond float64 `json:"per_s"`
}

func (c benchIdleCmd) Run(env *runEnv) error {
	if os.Getenv("DATABASE_URL") != "" {
		return &exitError{code: 2, err: errors.New("bench idle measures buddi's own embedded database: unset DATABASE_URL")}
	}
	if c.For < time.Second {
		return &exitError{code: 2, err: errors.New("--for must be at least 1s")}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	home, err := os.MkdirTemp("", "buddi-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	s, err := startBenchServe(env.ctx, self, home)
	if err != nil {
		return err
	}
	res, err := c.measure(env.ctx, s)
	if _, serr := s.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(env, res)
	}
	wal := "not counted by this server"
	if res.WALFlushes >= 0 {
		wal = fmt.Sprintf("%7.2f /s", res.WALFlushes)
	}
	fmt.Fprintf(env.stdout, "buddi idle for %.0f s (embedded database, sampled after %s idle):\n"+
		"  database transactions  %7.2f /s   (commits %.2f, rollbacks %.2f)\n"+
		"  write transactions     %7.2f /s\n"+
		"  WAL flushes            %s\n"+
		"  CPU, buddi             %7.2f %% of a core\n"+
		"  CPU, postgres          %7.2f %% of a core\n"+
		"  RSS, buddi             %7.1f MB\n",
		res.Seconds, c.Settle, res.Transactions, res.Commits, res.Rollbacks, res.Writes, wal, res.BuddiCPU, res.PostgresCPU, res.RSSMB)
	if c.Statements {
		fmt.Fprintln(env.stdout, "transactions by where they come from (connection, first statement):")
		for _, sc := range res.BySource {
			fmt.Fprintf(env.stdout, "  %7.2f /s  %-12s %s\n", sc.PerSecond, sc.App, sc.Statement)
		}
	}
	return nil
}

// measure samples the idle buddi s: the database's counters and the processes' CPU at the
// start and the end of the window.
func (c benchIdleCmd) measure(ctx context.Context, s *benchServe) (idleResult, error) {
	var res idleResult
	conn, err := openStatsConn(ctx, s.home)
	if err != nil {
		return res, err
	}
	defer conn.Close(context.Background())
	if err := sleepCtx(ctx, c.Settle); err != nil {
		return res, err
	}
	logPath := pgcluster.New(pgcluster.Options{Dir: config.Config{Home: s.home}.ClusterDir()}).LogFile()
	var logStart int64
	if c.Statements {
		if logStart, err = logStatements(ctx, conn, logPath, true); err != nil {
			return res, err
		}
		defer logStatements(context.Background(), conn, logPath, false)
	}
	pg, err := postmasterOf(s.home)
	if err != nil {
		return res, err
	}
	db0, err := readDBStats(ctx, conn, dbsource.DatabaseName)
	if err != nil {
		return res, err
	}
	buddi0, pg0 := cpuTicks(s.cmd.Process.Pid), treeTicks(pg)
	if err := sleepCtx(ctx, c.For); err != nil {
		return res, err
	}
	db1, err := readDBStats(ctx, conn, dbsource.DatabaseName)
	if err != nil {
		return res, err
	}
	buddi1, pg1 := cpuTicks(s.cmd.Process.Pid), treeTicks(pg)
	secs := db1.At.Sub(db0.At).Seconds()
	per := func(d int64) float64 { return float64(d) / secs }
	res.Seconds = secs
	res.Commits, res.Rollbacks = per(db1.Commits-db0.Commits), per(db1.Rollbacks-db0.Rollbacks)
	res.Transactions = res.Commits + res.Rollbacks
	res.Writes = per(db1.NextXid - db0.NextXid)
	res.WALFlushes = -1
	if db0.WALSyncs >= 0 {
		res.WALFlushes = per(db1.WALSyncs - db0.WALSyncs)
	}
	res.BuddiCPU = 100 * float64(buddi1-buddi0) / clockTicks / secs
	res.PostgresCPU = 100 * float64(pg1-pg0) / clockTicks / secs
	if kb, err := rss(s.cmd.Process.Pid); err == nil {
		res.RSSMB = float64(kb) / 1024
	}
	if c.Statements {
		raw, err := readFrom(logPath, logStart)
		if err != nil {
			return res, err
		}
		res.BySource = transactionsBySource(raw, secs)
	}
	return res, nil
}

// openStatsConn connects to the embedded cluster of home as its owner, on the maintenance
// database, so that reading the statistics adds no transaction to buddi's database.
func openStatsConn(ctx context.Context, home string) (*pgx.Conn, error) {
	dsn, err := pgcluster.New(pgcluster.Options{Dir: config.Config{Home: home}.ClusterDir()}).OwnerDSN("postgres")
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = "buddi-bench"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the embedded database of %s to read its statistics: %w", home, err)
	}
	return conn, nil
}

// dbStats are the server's counters at one moment. Postgres publishes a backend's counts
// when it goes idle, at most once a second (an idle backend's last second within 10 s), so
// a delta is exact only over a window long against that.
type dbStats struct {
	At         time.Time
	Commits    int64 // pg_stat_database.xact_commit of the database: read-only ones included
	Rollbacks  int64 // pg_stat_database.xact_rollback
	NextXid    int64 // the next transaction id: its delta counts the transactions that wrote
	WALSyncs   int64 // pg_stat_wal.wal_sync, the WAL flushes; -1 when the server has no such count
	WALRecords int64 // pg_stat_wal.wal_records; -1 when absent
}

// readDBStats reads database's counters through conn (which should be on another database).
func readDBStats(ctx context.Context, conn *pgx.Conn, database string) (dbStats, error) {
	st := dbStats{At: time.Now()}
	err := conn.QueryRow(ctx, `SELECT d.xact_commit, d.xact_rollback,
			pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
			COALESCE((SELECT (to_jsonb(w) ->> 'wal_sync')::bigint FROM pg_stat_wal w), -1),
			COALESCE((SELECT (to_jsonb(w) ->> 'wal_records')::bigint FROM pg_stat_wal w), -1)
		FROM pg_stat_database d WHERE d.datname = $1`, database).Scan(&st.Commits, &st.Rollbacks, &st.NextXid, &st.WALSyncs, &st.WALRecords)
	if err != nil {
		return st, fmt.Errorf("read the statistics of database %s: %w", database, err)
	}
	return st, nil
}

// logStatements switches the server's logging of every statement on (returning the log's
// size, where the statements begin) or off again.
func logStatements(ctx context.Context, conn *pgx.Conn, logPath string, on bool) (int64, error) {
	sqls := []string{`ALTER SYSTEM RESET log_statement`, `ALTER SYSTEM RESET log_line_prefix`, `SELECT pg_reload_conf()`}
	if on {
		sqls = []string{`ALTER SYSTEM SET log_statement = 'all'`, `ALTER SYSTEM SET log_line_prefix = '%m [%p] app=%a: '`, `SELECT pg_reload_conf()`}
	}
	for _, q := range sqls {
		if _, err := conn.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("switch the statement log (%s): %w", q, err)
		}
	}
	if !on {
		return 0, nil
	}
	// A backend takes the new setting before its next command; give the idle ones a moment.
	if err := sleepCtx(ctx, time.Second); err != nil {
		return 0, err
	}
	fi, err := os.Stat(logPath)
	if err != nil {
		return 0, fmt.Errorf("find the database's log: %w", err)
	}
	return fi.Size(), nil
}

func readFrom(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// transactionsBySource reads a statement log written with logStatements's prefix and counts
// transactions a second by their source: a statement outside BEGIN … COMMIT is a transaction
// of its own; a block counts once, under its first statement. The bench's own connection is
// left out.
func transactionsBySource(raw []byte, secs float64) []sourceCount {
	type key struct{ app, stmt string }
	counts := map[key]int{}
	type backend struct {
		inBlock, first bool
	}
	backends := map[string]*backend{}
	var pendingPid, pendingApp string // a statement whose first line was empty
	count := func(pid, app, stmt string) {
		b := backends[pid]
		if b == nil {
			b = &backend{}
			backends[pid] = b
		}
		lower := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(stmt), ";"))
		switch {
		case lower == "begin" || strings.HasPrefix(lower, "begin ") || strings.HasPrefix(lower, "start transaction"):
			b.inBlock, b.first = true, true
		case lower == "commit" || lower == "rollback" || lower == "end":
			b.inBlock = false
		case !b.inBlock:
			counts[key{app, stmt}]++
		case b.first:
			b.first = false
			counts[key{app, stmt + " (in a transaction)"}]++
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if pendingPid != "" {
			if t := strings.TrimSpace(line); t != "" && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ")) {
				count(pendingPid, pendingApp, clip(t))
				pendingPid = ""
				continue
			}
			pendingPid = ""
		}
		_, rest, ok := strings.Cut(line, " [")
		if !ok {
			continue
		}
		pid, rest, ok := strings.Cut(rest, "] app=")
		if !ok {
			continue
		}
		app, msg, ok := strings.Cut(rest, ": LOG:  ")
		if !ok || app == "buddi-bench" {
			continue
		}
		var stmt string
		switch {
		case strings.HasPrefix(msg, "statement: "):
			stmt = strings.TrimPrefix(msg, "statement: ")
		case strings.HasPrefix(msg, "execute "):
			_, stmt, ok = strings.Cut(msg, ": ")
			if !ok {
				continue
			}
		default:
			continue
		}
		if strings.TrimSpace(stmt) == "" {
			pendingPid, pendingApp = pid, app
			continue
		}
		count(pid, app, clip(strings.TrimSpace(stmt)))
	}
	out := make([]sourceCount, 0, len(counts))
	for _, k := range slices.Collect(maps.Keys(counts)) {
		out = append(out, sourceCount{App: k.app, Statement: k.stmt, PerSecond: float64(counts[k]) / secs})
	}
	slices.SortFunc(out, func(a, b sourceCount) int {
		return cmp.Or(cmp.Compare(b.PerSecond, a.PerSecond), cmp.Compare(a.App, b.App), cmp.Compare(a.Statement, b.Statement))
	})
	return out
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times (100 on Linux).
const clockTicks = 100

// cpuTicks is the CPU time a process has used (user and system), in clock ticks; 0 when it
// cannot be read.
func cpuTicks(pid int) int64 {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// treeTicks is the CPU time of pid, its children now alive, and its children that have
// exited (which the kernel adds to the parent once it reaps them).
func treeTicks(pid int) int64 {
	f := procStat(pid)
	if len(f) < 15 {
		return 0
	}
	var total int64
	for _, i := range []int{11, 12, 13, 14} {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		total += n
	}
	entries, _ := os.ReadDir("/proc")
	parent := strconv.Itoa(pid)
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cf := procStat(child); len(cf) > 1 && cf[1] == parent {
			total += cpuTicks(child)
		}
	}
	return total
}

// procStat is /proc/<pid>/stat split after the command's name: [0] is the state (the
// file's third field), [1] the parent, [11] utime, [12] stime, [13] cutime, [14] cstime.
func procStat(pid int) []string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(raw[i+1:]))
}

// postmasterOf is the pid of the embedded server of home.
func postmasterOf(home string) (int, error) {
	path := filepath.Join(config.Config{Home: home}.ClusterDir(), "data", "postmaster.pid")
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("find the embedded database's process: %w", err)
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return pid, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
