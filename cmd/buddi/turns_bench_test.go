package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"buddi/app"
	"buddi/config"
	"buddi/dbsource"
	pt "buddi/runtime/providertest"
	"buddi/surfaces/webauth"
)

// BenchmarkTurns measures turns through the path the owner's own use takes: POST
// /api/messages of a buddi started in this process (app.Serve, its embedded database on
// disk as in production) with an account on the scripted model server, which answers at
// once ("ok", then the end of the turn). Each conversation is one client that sends its next
// message once the live stream (/api/conversations/{id}/live) has shown the last turn
// finished; every 25 turns it starts a new conversation from its own (new: true), so
// transcripts stay the length of a real one. b.N is the number of turns, spread over the
// conversations.
//
// It reports turns/s; p50 and p99 of a turn, from the POST to run.finished on the live
// stream; p50 and p99 from the POST to the run starting (the live run.started event's time);
// and per turn the database's commits (pg_stat_database.xact_commit, read-only
// transactions included), write transactions (transaction ids taken) and WAL flushes
// (pg_stat_wal.wal_sync). Postgres publishes a backend's counts at most once a second, so
// the per-turn figures are exact only for a window of many seconds: run it with
// -benchtime of 10s or more, and alone (-run '^$', so nothing else in the process has read
// the system's certificates before it trusts the scripted server's):
//
//	go test ./cmd/buddi -run '^$' -bench Turns -benchtime=20s
func BenchmarkTurns(b *testing.B) {
	h := startTurns(b)
	for _, n := range []int{1, 10, 50, 200} {
		b.Run(fmt.Sprintf("conversations=%d", n), func(b *testing.B) { h.measure(b, n) })
	}
}

// turnsEvery is how many turns a benchmark conversation takes before the next starts.
const turnsEvery = 25

// turnsHarness is a buddi serving in this process, and the conversations the benchmark
// keeps open between its runs.
type turnsHarness struct {
	model *pt.Server
	home  string
	base  string // http://127.0.0.1:port
	token string // the command line's token
	http  *http.Client
	stats *pgx.Conn
	seed  string // a conversation the benchmark's conversations are started from
	convs []*benchConv
}

// benchConv is one client's conversation and its live stream.
type benchConv struct {
	id     string
	turns  int // turns taken in this conversation
	ws     *websocket.Conn
	events chan liveEvent
}

// liveEvent is what the benchmark reads of an event on the live stream.
type liveEvent struct {
	Type  string    `json:"type"`
	RunID string    `json:"run_id"`
	Text  string    `json:"text"`
	At    time.Time `json:"at"`
}

// turnTiming is one turn's measurements.
type turnTiming struct {
	total, start time.Duration
}

// startTurns prepares a data directory with the scripted account (through the binary, as
// the owner would) and runs app.Serve on it in this process until the benchmark ends.
func startTurns(b *testing.B) *turnsHarness {
	model := pt.New(b)
	ca := filepath.Join(b.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, model.CAPEM(), 0o600); err != nil {
		b.Fatal(err)
	}
	const vaultKey = "aGVsbG8taGVsbG8taGVsbG8taGVsbG8taGVsbG8tISE="
	home, port, vars := env(b, "BUDDI_VAULT_KEY="+vaultKey, "SSL_CERT_FILE="+ca)
	benchBuddi(b, vars, pt.APIKey+"\n", "vault", "set", "MODEL_KEY")
	benchBuddi(b, vars, "", "db", "migrate")
	benchBuddi(b, vars, "", "accounts", "add", "scripted", "--wire", "anthropic", "--base-url", model.URL, "--secret", "MODEL_KEY")
	benchBuddi(b, vars, "", "agents", "set", "@dev", "--account", "scripted", "--model", "model-one")

	// buddi reads these two from its own environment.
	b.Setenv("SSL_CERT_FILE", ca)
	b.Setenv("BUDDI_VAULT_KEY", vaultKey)
	if conn, err := tls.Dial("tcp", strings.TrimPrefix(model.URL, "https://"), &tls.Config{ServerName: "127.0.0.1"}); err != nil {
		b.Fatalf("the system's certificates were read before SSL_CERT_FILE named the scripted server's (%v): run the benchmark alone, with -run '^$'", err)
	} else {
		conn.Close()
	}
	cfg, err := config.FromLookup(func(k string) (string, bool) {
		for _, kv := range slices.Backward(vars) {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v, true
			}
		}
		return "", false
	})
	if err == nil {
		err = cfg.Fill()
	}
	if err != nil {
		b.Fatal(err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	before := goleak.IgnoreCurrent()
	go func() {
		done <- app.Serve(ctx, cfg, log, app.Options{Ready: func(string) { close(ready) }})
	}()
	b.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				b.Errorf("buddi stopped with %v", err)
			}
		case <-time.After(time.Minute):
			b.Errorf("buddi did not stop within a minute")
		}
		// What buddi started ends a moment after it returns (the actor system's dead-letter
		// throttle sleeps a second): wait, so that the test binary's leak check finds none.
		deadline := time.Now().Add(30 * time.Second)
		for goleak.Find(before) != nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond) // polling interval
		}
		if b.Failed() {
			b.Logf("buddi's log:\n%s", logs.String())
		}
	})
	select {
	case <-ready:
	case err := <-done:
		b.Fatalf("buddi stopped before it was ready (%v):\n%s", err, logs.String())
	case <-time.After(2 * time.Minute):
		b.Fatalf("buddi was not ready within 2 minutes:\n%s", logs.String())
	}
	token, err := webauth.ReadCLIToken(home)
	if err != nil {
		b.Fatal(err)
	}
	stats, err := openStatsConn(ctx, home)
	if err != nil {
		b.Fatal(err)
	}
	h := &turnsHarness{model: model, home: home, base: fmt.Sprintf("http://127.0.0.1:%d", port), token: token, stats: stats,
		http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}}
	b.Cleanup(func() {
		for _, c := range h.convs {
			c.close()
		}
		h.http.CloseIdleConnections()
		stats.Close(context.Background())
	})
	// The seed: the agent's first conversation, which each benchmark conversation leaves.
	h.model.Script(pt.Text("ok"))
	sent, err := h.send(map[string]any{"agent": "@dev", "surface": "terminal", "text": "hello"})
	if err != nil {
		b.Fatal(err)
	}
	h.seed = sent.Conversation.ID
	seed := &benchConv{id: h.seed}
	defer seed.close()
	if err := h.follow(seed, sent.RunID, time.Now(), nil); err != nil {
		b.Fatal(err)
	}
	return h
}

// measure runs b.N turns over n conversations at once.
func (h *turnsHarness) measure(b *testing.B, n int) {
	ctx := context.Background()
	// The conversations, opened outside the measurement (and kept for the next run).
	if err := h.open(n); err != nil {
		b.Fatal(err)
	}
	settle := func() { _ = sleepCtx(ctx, 2*time.Second) } // the backends publish their counts
	settle()
	st0, err := readDBStats(ctx, h.stats, dbsource.DatabaseName)
	if err != nil {
		b.Fatal(err)
	}
	var (
		next    atomic.Int64
		mu      sync.Mutex
		timings []turnTiming
		failed  error
		wg      sync.WaitGroup
	)
	b.ResetTimer()
	t0 := time.Now()
	for _, c := range h.convs[:n] {
		wg.Go(func() {
			var mine []turnTiming
			for next.Add(1) <= int64(b.N) {
				tt, err := h.turn(c)
				if err != nil {
					mu.Lock()
					failed = firstErr(failed, err)
					mu.Unlock()
					return
				}
				mine = append(mine, tt)
			}
			mu.Lock()
			timings = append(timings, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	settle()
	st1, err := readDBStats(ctx, h.stats, dbsource.DatabaseName)
	if err != nil {
		b.Fatal(err)
	}
	ms := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(float64(len(s)-1)*p)].Microseconds()) / 1000
	}
	var total, start []time.Duration
	for _, t := range timings {
		total, start = append(total, t.total), append(start, t.start)
	}
	turns := float64(b.N)
	b.ReportMetric(turns/elapsed.Seconds(), "turns/s")
	b.ReportMetric(ms(total, 0.5), "p50-ms")
	b.ReportMetric(ms(total, 0.99), "p99-ms")
	b.ReportMetric(ms(start, 0.5), "start-p50-ms")
	b.ReportMetric(ms(start, 0.99), "start-p99-ms")
	b.ReportMetric(float64(st1.Commits-st0.Commits)/turns, "commits/turn")
	b.ReportMetric(float64(st1.NextXid-st0.NextXid)/turns, "writes/turn")
	if st0.WALSyncs >= 0 {
		b.ReportMetric(float64(st1.WALSyncs-st0.WALSyncs)/turns, "walflush/turn")
	}
}

// open makes sure there are n conversations, starting the missing ones (twenty at a time).
func (h *turnsHarness) open(n int) error {
	var (
		mu     sync.Mutex
		failed error
		wg     sync.WaitGroup
		slots  = make(chan struct{}, 20)
	)
	for range n - len(h.convs) {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			c := &benchConv{id: h.seed}
			_, err := h.turn(c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = firstErr(failed, err)
				c.close()
				return
			}
			h.convs = append(h.convs, c)
		})
	}
	wg.Wait()
	return failed
}

// turn sends c's next message and waits for its run to finish. The first turn of a
// benchmark conversation, and every turnsEvery-th, starts a new conversation.
func (h *turnsHarness) turn(c *benchConv) (turnTiming, error) {
	body := map[string]any{"conversation_id": c.id, "surface": "terminal", "text": "how are you"}
	if c.ws == nil || c.turns >= turnsEvery {
		body["new"] = true
	} else {
		body["resume"] = true
	}
	h.model.Script(pt.Text("ok"))
	t0 := time.Now()
	sent, err := h.send(body)
	if err != nil {
		return turnTiming{}, err
	}
	if sent.Joined {
		return turnTiming{}, fmt.Errorf("the message to %s joined run %s: the previous turn was still in flight after run.finished", c.id, sent.RunID)
	}
	if sent.Conversation.ID != c.id {
		c.close()
		if err := h.watch(c, sent.Conversation.ID, sent.RunID); err != nil {
			return turnTiming{}, err
		}
	}
	c.turns++
	var tt turnTiming
	if err := h.follow(c, sent.RunID, t0, &tt); err != nil {
		return tt, err
	}
	return tt, nil
}

// watch opens the live stream of conversation id from run onward for c.
func (h *turnsHarness) watch(c *benchConv, id, run string) error {
	u := strings.Replace(h.base, "http://", "ws://", 1) + "/api/conversations/" + id + "/live?run=" + url.QueryEscape(run)
	ws, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + h.token}})
	if err != nil {
		return fmt.Errorf("watch conversation %s: %w", id, err)
	}
	events := make(chan liveEvent, 1024)
	go func() {
		defer close(events)
		for {
			var ev liveEvent
			if err := ws.ReadJSON(&ev); err != nil {
				return
			}
			events <- ev
		}
	}()
	c.id, c.turns, c.ws, c.events = id, 0, ws, events
	return nil
}

// follow reads c's live stream until run finishes, noting (in tt, when given) the time from
// t0 to the run's start and to its end.
func (h *turnsHarness) follow(c *benchConv, run string, t0 time.Time, tt *turnTiming) error {
	if c.ws == nil {
		if err := h.watch(c, c.id, run); err != nil {
			return err
		}
	}
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return fmt.Errorf("the live stream of %s ended before run %s did", c.id, run)
			}
			if ev.RunID != run {
				continue
			}
			switch ev.Type {
			case "run.started":
				if tt != nil {
					tt.start = ev.At.Sub(t0)
				}
			case "run.failed":
				return fmt.Errorf("run %s failed: %s", run, ev.Text)
			case "run.finished":
				if tt != nil {
					tt.total = time.Since(t0)
				}
				return nil
			}
		case <-timeout.C:
			return fmt.Errorf("run %s did not finish within a minute", run)
		}
	}
}

func (c *benchConv) close() {
	if c.ws != nil {
		c.ws.Close()
		for range c.events { // the reader ends with the connection
		}
		c.ws, c.events = nil, nil
	}
}

// benchSent is what the benchmark reads of POST /api/messages's answer.
type benchSent struct {
	Conversation struct {
		ID string `json:"id"`
	} `json:"conversation"`
	RunID  string `json:"run_id"`
	Joined bool   `json:"joined"`
}

func (h *turnsHarness) send(body map[string]any) (benchSent, error) {
	var sent benchSent
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, h.base+"/api/messages", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := h.http.Do(req)
	if err != nil {
		return sent, fmt.Errorf("POST /api/messages: %w", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return sent, fmt.Errorf("POST /api/messages: %s %s", resp.Status, out)
	}
	if err := json.Unmarshal(out, &sent); err != nil || sent.RunID == "" {
		return sent, fmt.Errorf("POST /api/messages answered %s: %v", out, err)
	}
	return sent, nil
}

// benchBuddi runs the binary to completion with input on its stdin, and fails b unless it
// exits 0.
func benchBuddi(b *testing.B, vars []string, input string, args ...string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env, cmd.Stdin = vars, strings.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("buddi %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

// firstErr keeps the first error.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
