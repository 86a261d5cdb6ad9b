package mcpserver_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"buddi/core/seal"
	"buddi/internal/pgtest"
	"buddi/surfaces/mcpserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A token works once created, is stored only as a keyed hash, keeps its read-only flag,
// refuses a second of its name, stops at revoke (its name free again), and a row whose flag
// was flipped in the database, or made without the key, is no token.
func TestTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	key, err := seal.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tokens := mcpserver.Tokens{Q: pool, Key: key}

	full, err := tokens.Create(ctx, "laptop", false)
	if err != nil || !strings.HasPrefix(full, mcpserver.TokenPrefix) {
		t.Fatalf("create: %q %v", full, err)
	}
	ro, err := tokens.Create(ctx, "watcher", true)
	if err != nil {
		t.Fatal(err)
	}
	var stored int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM core.mcp_tokens WHERE token_hash IN ($1, $2) OR seal IN ($1, $2)`, full, ro).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("a token's value is stored: %d %v", stored, err)
	}
	first, found, err := tokens.Check(ctx, full)
	if err != nil || !found || first.Name != "laptop" || first.ReadOnly || first.Hash == "" {
		t.Fatalf("check laptop: %+v %v %v", first, found, err)
	}
	if tk, found, err := tokens.Check(ctx, ro); err != nil || !found || !tk.ReadOnly {
		t.Fatalf("check watcher: %+v %v %v", tk, found, err)
	}
	for _, bad := range []string{"", "nope", full + "x", mcpserver.TokenPrefix} {
		if _, found, err := tokens.Check(ctx, bad); err != nil || found {
			t.Fatalf("check %q: %v %v", bad, found, err)
		}
	}
	if _, found, _ := (mcpserver.Tokens{Q: pool}).Check(ctx, full); found {
		t.Fatal("a token was accepted without the seal key")
	}
	if _, err := tokens.Create(ctx, "laptop", true); !errors.Is(err, mcpserver.ErrExists) {
		t.Fatalf("a second laptop: %v", err)
	}
	if _, err := tokens.Create(ctx, "no spaces", true); !errors.Is(err, mcpserver.ErrBadName) {
		t.Fatalf("a bad name: %v", err)
	}

	// Whoever writes the database cannot widen a read-only token.
	if _, err := pool.Exec(ctx, `UPDATE core.mcp_tokens SET read_only = false WHERE name = 'watcher'`); err != nil {
		t.Fatal(err)
	}
	if _, found, err := tokens.Check(ctx, ro); err != nil || found {
		t.Fatalf("a widened token still works: %v %v", found, err)
	}

	list, err := tokens.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "laptop" || list[0].LastUsed == nil {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := tokens.Revoke(ctx, "laptop"); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := tokens.Check(ctx, full); found {
		t.Fatal("a revoked token still works")
	}
	if err := tokens.Revoke(ctx, "laptop"); !errors.Is(err, mcpserver.ErrNoToken) {
		t.Fatalf("revoke twice: %v", err)
	}
	again, err := tokens.Create(ctx, "laptop", false)
	if err != nil || again == full {
		t.Fatalf("a revoked name taken again: %v", err)
	}
	if _, found, _ := tokens.Check(ctx, full); found {
		t.Fatal("the old token came back with its name")
	}
	// The new laptop is not the old one: what ask_agent records its conversations under
	// (the keyed hash) differs, so it holds none of the old token's conversations.
	if tk, found, err := tokens.Check(ctx, again); err != nil || !found || tk.Hash == first.Hash {
		t.Fatalf("the new laptop's hash is the old one's (%v %v)", found, err)
	}
}
