package preview_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"buddi/internal/pgtest"
)

// lockSessions holds an exclusive lock on the sessions' table until the returned function is
// called: every read of a session waits on it meanwhile.
func lockSessions(t *testing.T, f *fixture) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE core.web_sessions IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Commit(ctx) }) }
	t.Cleanup(release)
	return release
}

// waitingOnSessions counts the database's connections waiting for the sessions' lock.
func waitingOnSessions(t *testing.T, f *fixture) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%web_sessions%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// getAll makes n requests for the preview at once and returns their statuses.
func getAll(t *testing.T, f *fixture, c *http.Cookie, n int) []int {
	t.Helper()
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", f.prev.URL+"/preview/developer/web/page", nil)
			req.AddCookie(c)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	return codes
}

// A preview session in use is confirmed again by the database before its 30 seconds of trust
// run out, once, off the requests' path: requests meanwhile do not wait for the database, and
// a session the database no longer has is refused as soon as the answer comes.
func TestSessionConfirmedAheadOffTheRequestPath(t *testing.T) {
	f := newFixture(t)
	c := f.open(t, "web")
	if codes := getAll(t, f, c, 1); codes[0] != 200 {
		t.Fatalf("first request: %d", codes[0])
	}
	release := lockSessions(t, f)
	f.srv.AgeSessions(25 * time.Second)
	for _, code := range getAll(t, f, c, 10) {
		if code != 200 {
			t.Fatalf("a request while the session is confirmed again: %d, want 200 without waiting for the database", code)
		}
	}
	pgtest.Eventually(t, "a question to the database, under way", func() bool { return waitingOnSessions(t, f) == 1 })
	release()
	pgtest.Eventually(t, "the question answered", func() bool { return f.srv.SessionQuestions() == 2 })
	if n := waitingOnSessions(t, f); n != 0 {
		t.Fatalf("%d questions still waiting", n)
	}
	if _, err := f.pool.Exec(context.Background(), `DELETE FROM core.web_sessions`); err != nil {
		t.Fatal(err)
	}
	// The answer to the question asked under the lock said valid (the row was there when it
	// was read); the next one, 20 seconds on, hears the session is gone.
	f.srv.AgeSessions(25 * time.Second)
	pgtest.Eventually(t, "the deleted session refused", func() bool { return getAll(t, f, c, 1)[0] == http.StatusUnauthorized })
}

// A session whose trust ran out is asked of the database once however many requests carry it
// at that moment; they wait for that one answer, and pass when it says valid.
func TestSessionRecheckedOnceForManyRequests(t *testing.T) {
	f := newFixture(t)
	c := f.open(t, "web")
	if codes := getAll(t, f, c, 1); codes[0] != 200 {
		t.Fatalf("first request: %d", codes[0])
	}
	release := lockSessions(t, f)
	f.srv.AgeSessions(31 * time.Second)
	done := make(chan []int)
	go func() { done <- getAll(t, f, c, 6) }()
	pgtest.Eventually(t, "a question to the database, under way", func() bool { return waitingOnSessions(t, f) >= 1 })
	release()
	for _, code := range <-done {
		if code != 200 {
			t.Fatalf("a request once the session was confirmed: %d", code)
		}
	}
	if n := f.srv.SessionQuestions(); n != 2 { // the first request's, and this one
		t.Fatalf("the database was asked %d times about one session, want 2", n)
	}
}
