package run_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"buddi/core/conversation"
	"buddi/runtime/provider"
	pt "buddi/runtime/providertest"
	"buddi/runtime/run"
)

// noopArgs is a bare job: the baseline of queue pickup.
type noopArgs struct {
	N int `json:"n"`
}

func (noopArgs) Kind() string { return "bench.noop" }
func (noopArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: run.Queue}
}

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	started chan time.Time
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.started <- time.Now()
	return nil
}

// BenchmarkConversationLoad runs 200 conversations of 5 turns each against a scripted model
// that answers at once, through everything buddi serve runs: the message stored and its run
// enqueued in one transaction, River, the conversation and run actors, the real adapter over
// the real transport (TLS, no keep-alive), the transcript and the live hub. It reports turns
// per second and the p50/p99 from the message accepted to its first streamed token, and, as
// the baseline measured in the same run, the pickup latency of a bare River job on the same
// queue. Run it with -benchtime=1x: one iteration is the whole load.
func BenchmarkConversationLoad(b *testing.B) {
	const conversations, turns = 200, 5
	noop := &noopWorker{started: make(chan time.Time, 1)}
	h := newHarness(b, provider.WireAnthropic, func(w *river.Workers) { river.AddWorker(w, noop) })
	ctx := context.Background()

	// The baseline: a bare job's pickup, inserted one at a time on the runs queue.
	var pickup []time.Duration
	for i := range 200 {
		t0 := time.Now()
		if _, err := h.q.Client().Insert(ctx, noopArgs{N: i}, nil); err != nil {
			b.Fatal(err)
		}
		pickup = append(pickup, (<-noop.started).Sub(t0))
	}

	for range b.N {
		replies := make([]pt.Reply, conversations*turns)
		for i := range replies {
			replies[i] = pt.Text("ok")
		}
		h.model.Script(replies...)
		start := h.runner.StartNext(run.Meta{Surface: "terminal", Interactive: true})
		// turn sends one message and waits for its run to end; it returns the time from the
		// message accepted to the run's first streamed token.
		turn := func(m conversation.Message) (string, time.Duration) {
			sent, err := h.convs.Send(ctx, m, start)
			accepted := time.Now()
			if err != nil {
				b.Error(err)
				return "", 0
			}
			sub := h.hub.Subscribe(sent.Conversation.ID, sent.RunID)
			defer sub.Close()
			var first time.Time
			for ev := range sub.C {
				if ev.RunID != sent.RunID {
					continue
				}
				if ev.Type == "text" && first.IsZero() {
					first = ev.At
				}
				if ev.Type == "run.finished" || ev.Type == "run.failed" {
					break
				}
			}
			return sent.Conversation.ID, first.Sub(accepted)
		}
		// The conversations are opened first, one at a time: the unloaded figure.
		convs := make([]string, conversations)
		var unloaded []time.Duration
		for i := range convs {
			var d time.Duration
			convs[i], d = turn(conversation.Message{Agent: "tester", Surface: "terminal", Text: "hello", New: true})
			unloaded = append(unloaded, d)
		}
		b.ResetTimer()
		var mu sync.Mutex
		var firstToken []time.Duration
		began := time.Now()
		var wg sync.WaitGroup
		for _, conv := range convs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range turns - 1 {
					_, d := turn(conversation.Message{ConversationID: conv, Resume: true, Agent: "tester", Surface: "terminal", Text: "and?"})
					mu.Lock()
					firstToken = append(firstToken, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(began)
		b.StopTimer()
		n := len(firstToken) + conversations // the opening turns ran before the clock
		b.ReportMetric(float64(len(firstToken))/elapsed.Seconds(), "turns/s")
		p50, p99 := pct(firstToken, 50), pct(firstToken, 99)
		b50, b99 := pct(pickup, 50), pct(pickup, 99)
		b.ReportMetric(ms(p50), "first-token-p50-ms")
		b.ReportMetric(ms(p99), "first-token-p99-ms")
		b.ReportMetric(ms(b50), "bare-pickup-p50-ms")
		b.ReportMetric(ms(b99), "bare-pickup-p99-ms")
		b.ReportMetric(float64(p50)/float64(b50), "p50-ratio")
		u50, u99 := pct(unloaded, 50), pct(unloaded, 99)
		b.ReportMetric(ms(u50), "unloaded-first-token-p50-ms")
		b.Logf("%d turns (%d measured under load); accepted→first token p50 %v p99 %v; one at a time p50 %v p99 %v; bare River pickup p50 %v p99 %v",
			n, len(firstToken), p50, p99, u50, u99, b50, b99)
	}
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
