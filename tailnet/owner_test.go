package tailnet_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/events"
	"buddi/core/seal/sealtest"
	"buddi/internal/pgtest"
	"buddi/tailnet"
)

// caller is who the fake WhoIs says calls: the stranger, whatever the address.
const mallory = "mallory@evil.example"

// serveGate serves "hello owner" behind gate's OwnerOnly on loopback and returns a GET of it.
func serveGate(t *testing.T, gate *tailnet.Gate) func() (int, string) {
	t.Helper()
	srv := httptest.NewServer(gate.OwnerOnly("test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello owner")
	})))
	t.Cleanup(srv.Close)
	return func() (int, string) {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

func countEvents(t *testing.T, pool *pgxpool.Pool, kind events.Kind) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM core.events WHERE kind = $1`, kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The owner's tailnet login written straight into core.system_flags, as whoever can write the
// database would: the stranger it names is refused, and the refusal is recorded. The same
// login set with `buddi tailnet owner` gets in.
func TestForgedOwnerLoginIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	key := sealtest.Key(t)
	who := func(context.Context, string) (tailnet.Caller, error) {
		return tailnet.Caller{Login: mallory, Node: "laptop"}, nil
	}
	gate := tailnet.NewGate(who, func() []string { return []string{"127.0.0.1"} }, pool, key, nil)
	get := serveGate(t, gate)
	if _, err := pool.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ('tailnet_owner', $1)`, `{"login":"`+mallory+`","how":"command"}`); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code, body := get(); code != http.StatusForbidden || !strings.Contains(body, "buddi tailnet owner") {
			t.Fatalf("a forged owner login: %d %s", code, body)
		}
	}
	if n := countEvents(t, pool, events.TailnetForged); n != 1 {
		t.Errorf("tailnet.forged events: %d, want 1", n)
	}
	if o, err := tailnet.Owner(ctx, pool, key); err != nil || o != "" {
		t.Errorf("Owner with a forged row: %q %v", o, err)
	}
	// A copy of a seal made under another key checks nothing either.
	if err := tailnet.SetOwner(ctx, pool, sealtest.Key(t), mallory); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(); code != http.StatusForbidden {
		t.Fatalf("an owner login sealed under another key: %d", code)
	}
	// buddi's own path.
	if err := tailnet.SetOwner(ctx, pool, key, mallory); err != nil {
		t.Fatal(err)
	}
	if code, body := get(); code != http.StatusOK || body != "hello owner" {
		t.Fatalf("the owner login buddi set: %d %s", code, body)
	}
}

// A sign-in ticket redeemed over the tailnet pins its login in place of one buddi did not
// seal, and never in place of one it did.
func TestPinOwnerReplacesOnlyAForgedLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	key := sealtest.Key(t)
	if _, err := pool.Exec(ctx, `INSERT INTO core.system_flags (key, value) VALUES ('tailnet_owner', $1)`, `{"login":"`+mallory+`","how":"ticket"}`); err != nil {
		t.Fatal(err)
	}
	if got, err := tailnet.PinOwner(ctx, pool, key, "owner@example.com"); err != nil || got != "owner@example.com" {
		t.Fatalf("PinOwner over a forged login: %q %v", got, err)
	}
	if got, err := tailnet.PinOwner(ctx, pool, key, mallory); err != nil || got != "owner@example.com" {
		t.Fatalf("PinOwner over the pinned login: %q %v", got, err)
	}
	if o, err := tailnet.Owner(ctx, pool, key); err != nil || o != "owner@example.com" {
		t.Fatalf("Owner: %q %v", o, err)
	}
}
