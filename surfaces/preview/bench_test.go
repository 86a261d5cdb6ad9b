package preview_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// BenchmarkProxyHTTP compares requests through the preview proxy with the same requests to
// the dev server directly, in the same run: b.N requests each way from 8 concurrent clients
// with keep-alive; it reports requests per second and p50/p99 latency of both, and the ratios.
func BenchmarkProxyHTTP(b *testing.B) {
	f := newFixture(b)
	cookie := f.open(b, "web")
	direct := f.up.srv.URL + "/page"
	proxied := f.prev.URL + "/preview/developer/web/page"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	run := func(url string, withCookie bool) (float64, time.Duration, time.Duration) {
		var mu sync.Mutex
		var lat []time.Duration
		next := make(chan struct{}, b.N)
		for range b.N {
			next <- struct{}{}
		}
		close(next)
		start := time.Now()
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range next {
					req, _ := http.NewRequest("GET", url, nil)
					if withCookie {
						req.AddCookie(cookie)
					}
					t0 := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
					d := time.Since(t0)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return float64(b.N) / time.Since(start).Seconds(), pct(lat, 50), pct(lat, 99)
	}
	b.ResetTimer()
	dRate, d50, d99 := run(direct, false)
	pRate, p50, p99 := run(proxied, true)
	b.ReportMetric(dRate, "direct-req/s")
	b.ReportMetric(pRate, "proxied-req/s")
	b.ReportMetric(dRate/pRate, "throughput-ratio")
	b.ReportMetric(float64(p50)/float64(d50), "p50-ratio")
	b.ReportMetric(float64(p99)/float64(d99), "p99-ratio")
	b.Logf("direct %.0f req/s p50 %v p99 %v; proxied %.0f req/s p50 %v p99 %v", dRate, d50, d99, pRate, p50, p99)
}

// BenchmarkProxyWebsocket compares a websocket round trip (send, echo back) through the
// proxy with the same round trip direct, on one open connection each.
func BenchmarkProxyWebsocket(b *testing.B) {
	f := newFixture(b)
	cookie := f.open(b, "web")
	dial := func(url string, hdr http.Header) *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial(url, hdr)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	direct := dial(strings.Replace(f.up.srv.URL, "http://", "ws://", 1)+"/ws", nil)
	proxied := dial(strings.Replace(f.prev.URL, "http://", "ws://", 1)+"/preview/developer/web/ws", http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}, "Origin": {f.prev.URL}})
	roundTrips := func(c *websocket.Conn) []time.Duration {
		lat := make([]time.Duration, 0, b.N)
		msg := []byte("hello")
		for range b.N {
			t0 := time.Now()
			if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.ReadMessage(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		return lat
	}
	b.ResetTimer()
	d := roundTrips(direct)
	p := roundTrips(proxied)
	d50, p50 := pct(d, 50), pct(p, 50)
	b.ReportMetric(float64(d50.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(p50.Microseconds()), "proxied-p50-µs")
	b.ReportMetric(float64(p50)/float64(d50), "p50-ratio")
	b.ReportMetric(float64(pct(p, 99))/float64(pct(d, 99)), "p99-ratio")
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}
