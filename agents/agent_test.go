package agents

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseAgentFields(t *testing.T) {
	t.Parallel()
	full := "\uFEFF---\r\n" + `id: front-desk
handle: "@desk"
name: Front Desk
tools: [developer.read, web.search]
roles:
  - front-desk
  - recap
skills: [house-rules, first_run]
language: en-us
turn_budget: 25
idle_rollover: 90m
default: true
---

You are the front desk.

Be brief.
`
	tests := []struct {
		name string
		file string
		want Agent
	}{
		{"every field", full, Agent{
			ID: "front-desk", Handle: "@desk", Name: "Front Desk",
			Tools: []string{"developer.read", "web.search"}, Roles: []string{"front-desk", "recap"},
			Skills: []string{"house-rules", "first_run"}, Language: "en-US", TurnBudget: 25,
			IdleRollover: 90 * time.Minute, Default: true, Persona: "You are the front desk.\n\nBe brief.",
		}},
		{"handle without @", "---\nid: a\nhandle: dev\nname: A\n---\nhi", Agent{
			ID: "a", Handle: "@dev", Name: "A", Tools: []string{}, Roles: []string{}, Skills: []string{}, Persona: "hi",
		}},
		{"minimal, empty lists and nulls", "---\nid: a\nhandle: \"@a\"\nname: A\ntools: []\nroles:\nskills: ~\nlanguage:\ndefault: false\n---\nhi", Agent{
			ID: "a", Handle: "@a", Name: "A", Tools: []string{}, Roles: []string{}, Skills: []string{}, Persona: "hi",
		}},
		{"yaml comments and a closing ...", "---\n# who\nid: a # the id\nhandle: '@a'\nname: A\n...\nhi", Agent{
			ID: "a", Handle: "@a", Name: "A", Tools: []string{}, Roles: []string{}, Skills: []string{}, Persona: "hi",
		}},
		{"language pt-br", "---\nid: a\nhandle: \"@a\"\nname: A\nlanguage: pt-br\n---\nhi", Agent{
			ID: "a", Handle: "@a", Name: "A", Tools: []string{}, Roles: []string{}, Skills: []string{}, Language: "pt-BR", Persona: "hi",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ps problems
			got, ok := parseAgent("a.md", []byte(tt.file), SourcePrivate, &ps)
			if !ok {
				t.Fatalf("problems: %v", ps)
			}
			tt.want.Source, tt.want.Path = SourcePrivate, "a.md"
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v,\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseAgentRefuses(t *testing.T) {
	t.Parallel()
	head := "---\nid: a\nhandle: \"@a\"\nname: A\n"
	tests := []struct {
		name string
		file string
		want []string // pieces of one problem's message
	}{
		{"bad handle capitals", "---\nid: a\nhandle: \"@Dev\"\nname: A\n---\nhi", []string{`handle "@Dev"`, "not a valid handle"}},
		{"bad handle space", "---\nid: a\nhandle: \"@my dev\"\nname: A\n---\nhi", []string{"not a valid handle"}},
		{"bad id", "---\nid: Front_Desk\nhandle: \"@a\"\nname: A\n---\nhi", []string{`id "Front_Desk"`, "lower-case words joined by hyphens"}},
		{"bad role shape", head + "roles: [Front Desk]\n---\nhi", []string{"roles on line 5", `"Front Desk"`, "not a valid role"}},
		{"bad role trailing hyphen", head + "roles: [recap-]\n---\nhi", []string{`"recap-"`, "not a valid role"}},
		{"bad skill name", head + "skills: [House Rules]\n---\nhi", []string{`"House Rules"`, "not a valid skill name"}},
		{"bad tool no verb", head + "tools: [developer]\n---\nhi", []string{`"developer"`, "<plugin>.<verb>"}},
		{"bad tool wildcard", head + "tools: [developer.*]\n---\nhi", []string{`"developer.*"`, "not a tool name"}},
		{"bad tool capitals", head + "tools: [Developer.Read]\n---\nhi", []string{`"Developer.Read"`}},
		{"default not a bool", head + "default: yes\n---\nhi", []string{"default on line 5 must be true or false"}},
		{"duplicate key", head + "id: b\n---\nhi", []string{"key id appears twice, on lines 2 and 5"}},
		{"duplicate tool", head + "tools: [web.read, web.read]\n---\nhi", []string{"names web.read twice"}},
		{"empty id", "---\nid:\nhandle: \"@a\"\nname: A\n---\nhi", []string{"id is empty"}},
		{"empty persona", head + "---\n\n  \n", []string{"no persona"}},
		{"frontmatter is a list", "---\n- id\n---\nhi", []string{"key: value lines"}},
		{"idle rollover no unit", head + "idle_rollover: 3\n---\nhi", []string{"idle_rollover on line 5", "duration with its unit"}},
		{"idle rollover too long", head + "idle_rollover: 1000h\n---\nhi", []string{"between 1m and 720h"}},
		{"idle rollover too short", head + "idle_rollover: 10s\n---\nhi", []string{"between 1m and 720h"}},
		{"language not a tag", head + "language: klingonese-please\n---\nhi", []string{`language "klingonese-please"`, "BCP 47"}},
		{"missing handle", "---\nid: a\nname: A\n---\nhi", []string{"no handle", `handle: "@concierge"`}},
		{"missing id", "---\nhandle: \"@a\"\nname: A\n---\nhi", []string{"no id", "id: concierge"}},
		{"missing name", "---\nid: a\nhandle: \"@a\"\n---\nhi", []string{"no name"}},
		{"multi-line name", head[:len(head)-len("name: A\n")] + "name: |\n  A\n  B\n---\nhi", []string{"name on line 4 must be one line"}},
		{"no frontmatter", "You are nobody.\n", []string{"no frontmatter"}},
		{"not utf-8", head + "---\n\xff\xfe", []string{"not UTF-8"}},
		{"tier key is unknown", head + "tier: auto\n---\nhi", []string{`key "tier" on line 5`}},
		{"tools a string", head + "tools: developer.read\n---\nhi", []string{"tools on line 5 must be a list", "tools: ["}},
		{"tools a list of maps", head + "tools:\n  - web: read\n---\nhi", []string{"must be a list of names"}},
		{"turn budget a word", head + "turn_budget: ten\n---\nhi", []string{"turn_budget on line 5 must be a whole number"}},
		{"turn budget too big", head + "turn_budget: 1001\n---\nhi", []string{"between 1 and 1000"}},
		{"turn budget zero", head + "turn_budget: 0\n---\nhi", []string{"between 1 and 1000"}},
		{"unclosed frontmatter", head + "hi", []string{"never closed"}},
		{"unknown key", head + "colour: blue\n---\nhi", []string{`key "colour" on line 5`, "is not one an agent file takes", "id, handle, name, tools"}},
		{"unquoted @handle", "---\nid: a\nhandle: @a\nname: A\n---\nhi", []string{"not valid YAML", "line 3", `must be quoted, as in handle: "@dev"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ps problems
			if _, ok := parseAgent("a.md", []byte(tt.file), SourceExample, &ps); ok {
				t.Fatalf("parsed; want a problem with %q", tt.want)
			}
			if !hasProblem(ps, "a.md", tt.want...) {
				t.Errorf("got problems %v, want one with %q", ps, tt.want)
			}
		})
	}
}

func TestParseAgentReportsEveryProblem(t *testing.T) {
	t.Parallel()
	var ps problems
	parseAgent("a.md", []byte("---\nid: A\ncolour: red\ntools: [x]\n---\n"), SourceExample, &ps)
	for _, want := range []string{`id "A"`, `"colour"`, `"x"`, "no handle", "no name", "no persona"} {
		if !hasProblem(ps, "a.md", want) {
			t.Errorf("got %v, want a problem with %q", ps, want)
		}
	}
}

func TestAgentJSON(t *testing.T) {
	t.Parallel()
	a := Agent{ID: "a", Handle: "@a", Name: "A", Tools: []string{"web.read"}, IdleRollover: 2 * time.Hour, Source: SourcePrivate, Path: "/x/a.md"}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{"id": "a", "handle": "@a", "idle_rollover": "2h0m0s", "source": "private", "path": "/x/a.md", "default": false} {
		if !reflect.DeepEqual(got[key], want) {
			t.Errorf("%s: got %v, want %v (%s)", key, got[key], want, data)
		}
	}
	if _, ok := got["IdleRollover"]; ok {
		t.Errorf("the raw duration leaked: %s", data)
	}
	if a.Rollover() != 2*time.Hour || (Agent{}).Rollover() != DefaultIdleRollover {
		t.Errorf("Rollover: got %v and %v", a.Rollover(), (Agent{}).Rollover())
	}
}

func TestNormalizeHandle(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{{"@dev", "@dev"}, {"dev", "@dev"}, {" @Dev ", "@dev"}, {"", ""}}
	for _, tt := range tests {
		if got := NormalizeHandle(tt.in); got != tt.want {
			t.Errorf("NormalizeHandle(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseAgent(f *testing.F) {
	f.Add([]byte(agentFile("a", "@a", "tools: [web.read]", "roles: [recap]", "idle_rollover: 3h")))
	f.Add([]byte("---\nid: a\nhandle: @a\n---\n"))
	f.Add([]byte("---\n&x [a]\n---\n"))
	f.Add([]byte("---\na: *x\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ps problems
		a, ok := parseAgent("f.md", data, SourceExample, &ps)
		if ok != (len(ps) == 0) {
			t.Fatalf("ok %v with problems %v", ok, ps)
		}
		if ok && (!validID(a.ID) || !validHandle(a.Handle) || a.Name == "" || strings.TrimSpace(a.Persona) == "") {
			t.Fatalf("accepted an invalid agent %+v", a)
		}
		for _, p := range ps {
			if p.Path != "f.md" || p.Message == "" {
				t.Fatalf("bad problem %+v", p)
			}
		}
	})
}
