package agents

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestCatalog(t *testing.T) {
	t.Parallel()

	// The examples hold b (front-desk, recap) and a (recap); the owner holds z (recap) and
	// y (overview), and replaces nothing.
	setupRoles := func(t *testing.T) *Catalog {
		t.Helper()
		b := setup(t)
		b.example(t, "agents/1-b.md", agentFile("b", "@bee", "roles: [front-desk, recap]"))
		b.example(t, "agents/2-a.md", agentFile("a", "@a", "roles: [recap, overview]"))
		b.owner(t, "1-z.md", agentFile("z", "@zed", "roles: [recap]"))
		b.owner(t, "2-y.md", agentFile("y", "@y", "roles: [overview, maker]"))
		return b.load(t)
	}

	t.Run("AllIsSortedByID", func(t *testing.T) {
		t.Parallel()
		c := setupRoles(t)
		if got := ids(c.All()); !reflect.DeepEqual(got, []string{"a", "b", "y", "z"}) {
			t.Errorf("got %v", got)
		}
	})

	t.Run("ByHandleWithOrWithoutAt", func(t *testing.T) {
		t.Parallel()
		c := setupRoles(t)
		for _, h := range []string{"@bee", "bee", "@Bee", " BEE "} {
			if a, ok := c.ByHandle(h); !ok || a.ID != "b" {
				t.Errorf("ByHandle(%q): got %q, %v", h, a.ID, ok)
			}
		}
		if _, ok := c.ByHandle("b"); ok {
			t.Errorf("an id answered as a handle")
		}
		if _, ok := c.ByHandle(""); ok {
			t.Errorf("an empty handle answered")
		}
	})

	t.Run("ByID", func(t *testing.T) {
		t.Parallel()
		c := setupRoles(t)
		if a, ok := c.ByID("y"); !ok || a.Handle != "@y" || a.Source != SourcePrivate {
			t.Errorf("got %+v, %v", a, ok)
		}
		if _, ok := c.ByID("@y"); ok {
			t.Errorf("a handle answered as an id")
		}
	})

	t.Run("CopiesAreTheCallers", func(t *testing.T) {
		t.Parallel()
		c := setupRoles(t)
		a, _ := c.ByID("b")
		a.Roles[0] = "changed"
		all := c.All()
		all[1].Tools = append(all[1].Tools, "host.exec")
		if again, _ := c.ByID("b"); again.Roles[0] != "front-desk" || len(again.Tools) != 0 {
			t.Errorf("the catalogue changed: %+v", again)
		}
	})

	t.Run("ForRoleFirstClaimantInDeclarationOrder", func(t *testing.T) {
		t.Parallel()
		c := setupRoles(t)
		tests := []struct{ role, want string }{
			{"front-desk", "b"}, // only an example claims it
			{"maker", "y"},
			{"overview", "y"}, // the owner's half is declared before the examples
			{"recap", "z"},    // the owner's, though two examples claim it too
		}
		for _, tt := range tests {
			a, err := c.ForRole(tt.role)
			if err != nil || a.ID != tt.want {
				t.Errorf("ForRole(%q): got %q, %v; want %q", tt.role, a.ID, err, tt.want)
			}
		}
	})

	t.Run("ForRoleInFileOrderWithinAHalf", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.example(t, "agents/b.md", agentFile("a-second", "@second", "roles: [recap]"))
		b.example(t, "agents/a.md", agentFile("z-first", "@first", "roles: [recap]"))
		c := b.load(t)
		if a, err := c.ForRole("recap"); err != nil || a.ID != "z-first" {
			t.Errorf("got %q, %v; want the file that sorts first", a.ID, err)
		}
	})

	t.Run("ForRoleUnclaimedIsATypedProblem", func(t *testing.T) {
		t.Parallel()
		c := setupRoles(t)
		_, err := c.ForRole("sentinel-wake")
		var ru *RoleUnclaimedError
		if !errors.As(err, &ru) {
			t.Fatalf("got %v, want a *RoleUnclaimedError", err)
		}
		if ru.Role != "sentinel-wake" || ru.FixLine() != "roles: [sentinel-wake]" {
			t.Errorf("got %+v, %q", ru, ru.FixLine())
		}
		if !strings.Contains(err.Error(), `no agent claims the role sentinel-wake; add "roles: [sentinel-wake]"`) {
			t.Errorf("got %q", err)
		}
	})
}
