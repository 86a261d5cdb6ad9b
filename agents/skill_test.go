package agents

import (
	"reflect"
	"testing"
)

func TestParseSkill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		file       string
		privateFor string
		want       Skill
	}{
		{"agents list", skillFile("description: For two.", "agents: [concierge, \"@dev\"]"), "", Skill{
			Name: "s", Description: "For two.", Agents: []string{"concierge", "@dev"}, Body: "Do the thing well.",
		}},
		{"empty agents list", skillFile("agents: []"), "", Skill{Name: "s", Agents: []string{}, Body: "Do the thing well."}},
		{"matching name", skillFile("name: s"), "", Skill{Name: "s", Everyone: true, Body: "Do the thing well."}},
		{"no agents key loads for everyone", skillFile("description: House rule."), "", Skill{
			Name: "s", Description: "House rule.", Everyone: true, Body: "Do the thing well.",
		}},
		{"no frontmatter", "Just do it.\n", "", Skill{Name: "s", Everyone: true, Body: "Just do it."}},
		{"private", skillFile("description: Mine."), "dev", Skill{Name: "s", Description: "Mine.", Agent: "dev", Body: "Do the thing well."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ps problems
			got, ok := parseSkill("s.md", "s", []byte(tt.file), SourceExample, tt.privateFor, &ps)
			if !ok {
				t.Fatalf("problems: %v", ps)
			}
			tt.want.Source, tt.want.Path = SourceExample, "s.md"
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v,\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseSkillRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		stem       string
		file       string
		privateFor string
		want       []string
	}{
		{"agents in a private skill", "s", skillFile("agents: [a]"), "dev", []string{"private skill may not have an agents: key", "only for dev"}},
		{"agents not a list", "s", skillFile("agents: dev"), "", []string{"agents on line 2 must be a list"}},
		{"agents with a bad name", "s", skillFile("agents: [Dev Agent]"), "", []string{`"Dev Agent" is neither an agent id nor a handle`}},
		{"bad file name", "House Rules", skillFile("description: x"), "", []string{`"House Rules.md" is not a valid skill name`}},
		{"empty body", "s", "---\ndescription: x\n---\n", "", []string{"no text"}},
		{"name mismatch", "s", skillFile("name: other"), "", []string{`name "other" on line 2 does not match the file name`}},
		{"tier key", "s", skillFile("tier: auto"), "", []string{"may not have a tier key (line 2)", "never grants a tool or sets a tier"}},
		{"tier key in a private skill", "s", skillFile("tier: gated"), "dev", []string{"may not have a tier key"}},
		{"tools key", "s", skillFile("description: x", "tools: [host.exec]"), "", []string{"may not have a tools key (line 3)", "never grants a tool"}},
		{"tools key empty", "s", skillFile("tools: []"), "", []string{"may not have a tools key"}},
		{"unknown key", "s", skillFile("when: always"), "", []string{`key "when" on line 2 is not one a skill file takes`, "name, description, agents"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ps problems
			if _, ok := parseSkill("s.md", tt.stem, []byte(tt.file), SourcePrivate, tt.privateFor, &ps); ok {
				t.Fatalf("parsed; want a problem with %q", tt.want)
			}
			if !hasProblem(ps, "s.md", tt.want...) {
				t.Errorf("got problems %v, want one with %q", ps, tt.want)
			}
		})
	}
}
