package telegram_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkFirstSend measures, over 200 messages from the paired owner, the time from an
// update's arrival at the Bot API to the bot's first sendMessage for it ("Working on it…"):
// the poll, storing it before the offset advances, handling it from the store (the message and
// its run committed together), and the send. The model is not involved before the first send.
func BenchmarkFirstSend(b *testing.B) {
	f := newFixture(b)
	f.start()
	f.pair()
	f.handled(1)
	for range b.N {
		var lat []time.Duration
		for i := 0; i < 200; i++ {
			before := len(f.api.Calls("sendMessage"))
			t0 := time.Now()
			f.push(text(owner, ownerChat, "private", fmt.Sprintf("message %d", i)))
			for len(f.api.Calls("sendMessage")) == before {
				time.Sleep(100 * time.Microsecond) // polling the fake's record with a fine grain: the measurement's own clock
			}
			lat = append(lat, f.api.Calls("sendMessage")[before].At.Sub(t0))
			// The next message starts a new run of its own: end this one.
			f.mu.Lock()
			f.runs = f.runs[:0]
			f.mu.Unlock()
			if _, err := f.pool.Exec(b.Context(), `UPDATE core.conversations SET active_run = NULL`); err != nil {
				b.Fatal(err)
			}
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
