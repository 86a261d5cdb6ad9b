package agents

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// team is a catalogue of five agents: the concierge (front desk, an example), a maker that
// holds the platform write tools, and three colleagues in the owner's directory.
func team(t *testing.T) (*testBundle, *Catalog) {
	t.Helper()
	b := setup(t)
	b.example(t, "agents/concierge.md", agentFile("concierge", "@buddi", "roles: [front-desk]"))
	b.owner(t, "dev.md", agentFile("developer", "@dev"))
	b.owner(t, "ledger.md", agentFile("ledger", "@ledger"))
	b.owner(t, "art.md", agentFile("art", "@art"))
	b.owner(t, "father.md", agentFile("father", "@father", "roles: [maker]"))
	cat := b.load(t)
	return b, withTools(cat, "father", "platform.create_agent")
}

// withTools gives one agent of a loaded catalogue a grant (the catalogue's KnownTools check
// is off in these tests, so a file could say it too; this keeps the files short).
func withTools(c *Catalog, id string, tools ...string) *Catalog {
	i := c.byID[id]
	c.agents[i].Tools = tools
	for j := range c.declared {
		if c.declared[j].ID == id {
			c.declared[j].Tools = tools
		}
	}
	return c
}

func read(t *testing.T, b *testBundle, cat *Catalog, id string, log *slog.Logger) Delegates {
	t.Helper()
	a, ok := cat.ByID(id)
	if !ok {
		t.Fatalf("no agent %s", id)
	}
	d, err := ReadDelegates(b.config(), cat, a, log)
	if err != nil {
		t.Fatalf("ReadDelegates(%s): %v", id, err)
	}
	return d
}

func refusal(t *testing.T, d Delegates, cat *Catalog, ref string) string {
	t.Helper()
	_, err := d.Resolve(cat, ref)
	var r *RefusedError
	if !errors.As(err, &r) {
		t.Fatalf("Resolve(%s) = %v, want a refusal", ref, err)
	}
	return r.Sentence
}

// A delegates.json lists by id or handle; anyone else is refused with the list, in the
// seed's sentence; the file is read again at every call.
func TestDelegatesFileListsWhoMayBeAsked(t *testing.T) {
	b, cat := team(t)
	b.owner(t, "ledger/delegates.json", `["developer", "@buddi"]`)
	d := read(t, b, cat, "ledger", nil)
	if d.Everyone || !slices.Equal(ids(d.Allowed), []string{"developer", "concierge"}) || d.File != filepath.Join(b.agentsDir, "ledger", DelegatesFile) {
		t.Fatalf("delegates = %+v", d)
	}
	for _, ref := range []string{"developer", "@dev", "dev", "@buddi", "concierge"} {
		if _, err := d.Resolve(cat, ref); err != nil {
			t.Errorf("Resolve(%s): %v", ref, err)
		}
	}
	want := "@ledger may delegate to @dev, @buddi; @art is not on its list. The owner adds it on @ledger's Team tab."
	if got := refusal(t, d, cat, "@art"); got != want {
		t.Errorf("refusal:\n got %q\nwant %q", got, want)
	}
	if got := refusal(t, d, cat, "@nobody"); got != "There is no agent @nobody here; @ledger may delegate to @dev, @buddi." {
		t.Errorf("unknown colleague: %q", got)
	}
	if got := refusal(t, d, cat, "ledger"); !strings.Contains(got, "cannot delegate to itself") {
		t.Errorf("itself: %q", got)
	}

	// Read at every call: an edit applies to the next one.
	b.owner(t, "ledger/delegates.json", `["art"]`)
	if d := read(t, b, cat, "ledger", nil); !slices.Equal(ids(d.Allowed), []string{"art"}) {
		t.Errorf("after the edit: %v", ids(d.Allowed))
	}
}

// "*" is everyone but the asker and any agent holding the platform write tools, whom no file
// can name either.
func TestDelegatesStarIsEveryoneButTheMaker(t *testing.T) {
	b, cat := team(t)
	b.owner(t, "art/delegates.json", `["*"]`)
	d := read(t, b, cat, "art", nil)
	if !d.Everyone || d.As != "" || !slices.Equal(ids(d.Allowed), []string{"concierge", "developer", "ledger"}) {
		t.Fatalf("delegates = %+v", d)
	}
	if got := refusal(t, d, cat, "@father"); !strings.Contains(got, "@father makes and changes agents") {
		t.Errorf("the maker was not refused: %q", got)
	}
	var logged bytes.Buffer
	b.owner(t, "art/delegates.json", `["father", "developer"]`)
	d = read(t, b, cat, "art", slog.New(slog.NewTextHandler(&logged, nil)))
	if !slices.Equal(ids(d.Allowed), []string{"developer"}) || !strings.Contains(logged.String(), "platform write tools") {
		t.Errorf("a file naming the maker: %v, log %q", ids(d.Allowed), logged.String())
	}
}

// With no file, the front desk and the maker ask everyone (the maker never itself); every
// other agent asks nobody, and its refusal says where the list goes.
func TestDelegatesWithNoFile(t *testing.T) {
	b, cat := team(t)
	desk := read(t, b, cat, "concierge", nil)
	if !desk.Everyone || desk.As != RoleFrontDesk || desk.File != "" || !slices.Equal(ids(desk.Allowed), []string{"art", "developer", "ledger"}) {
		t.Fatalf("front desk = %+v", desk)
	}
	if desk.Describe() != "Can ask: everyone, as the front desk" {
		t.Errorf("describe: %q", desk.Describe())
	}
	maker := read(t, b, cat, "father", nil)
	if !maker.Everyone || maker.As != RoleMaker || slices.Contains(ids(maker.Allowed), "father") {
		t.Fatalf("maker = %+v", maker)
	}
	dev := read(t, b, cat, "developer", nil)
	if dev.Everyone || len(dev.Allowed) != 0 {
		t.Fatalf("developer = %+v", dev)
	}
	path := filepath.Join(b.agentsDir, "developer", DelegatesFile)
	want := `@dev may delegate to nobody; @ledger is not on its list. The owner adds it on @dev's Team tab, or in ` + path + ` (a JSON list of agent ids or handles, like ["ledger"]).`
	if got := refusal(t, dev, cat, "ledger"); got != want {
		t.Errorf("refusal:\n got %q\nwant %q", got, want)
	}

	// A file turns the front desk into a list, which then narrows it: the owner's file
	// beside the example agent wins over the role.
	b.owner(t, "concierge/delegates.json", `["developer"]`)
	desk = read(t, b, cat, "concierge", nil)
	if desk.Everyone || !slices.Equal(ids(desk.Allowed), []string{"developer"}) {
		t.Fatalf("front desk with a file = %+v", desk)
	}
	if got := refusal(t, desk, cat, "@art"); got != "@buddi may delegate to @dev; @art is not on its list. The owner adds it on @buddi's Team tab." {
		t.Errorf("front desk refusal: %q", got)
	}
}

// An id naming no installed agent is ignored with one log line; a file that is not a list of
// strings refuses everything rather than guessing.
func TestDelegatesUnknownIDsAndBadFiles(t *testing.T) {
	b, cat := team(t)
	b.owner(t, "ledger/delegates.json", `["scout", "developer"]`)
	var logged bytes.Buffer
	d := read(t, b, cat, "ledger", slog.New(slog.NewTextHandler(&logged, nil)))
	if !slices.Equal(ids(d.Allowed), []string{"developer"}) || !slices.Equal(d.Ignored, []string{"scout"}) {
		t.Fatalf("delegates = %+v", d)
	}
	if n := strings.Count(logged.String(), "\n"); n != 1 || !strings.Contains(logged.String(), "entry=scout") {
		t.Errorf("want one log line naming scout, got %q", logged.String())
	}

	b.owner(t, "ledger/delegates.json", `{"agents": ["developer"]}`)
	a, _ := cat.ByID("ledger")
	if _, err := ReadDelegates(b.config(), cat, a, nil); err == nil || !strings.Contains(err.Error(), "is not a JSON list of agent ids or handles") {
		t.Errorf("a bad file: %v", err)
	}

	// The examples may ship a list beside an example agent's file.
	if err := os.Remove(filepath.Join(b.agentsDir, "ledger", DelegatesFile)); err != nil {
		t.Fatal(err)
	}
	b.example(t, "agents/concierge/delegates.json", `["ledger"]`)
	desk := read(t, b, cat, "concierge", nil)
	if desk.Everyone || !slices.Equal(ids(desk.Allowed), []string{"ledger"}) || !strings.HasPrefix(desk.File, b.examples) {
		t.Fatalf("an example's shipped list = %+v", desk)
	}
}
