package email

import (
	"slices"
	"testing"
)

// The compiled-in manifest carries the inbox source and proposes an agent for triage whose
// grant names only the plugin's own tools, and which holds the mail role the source asks for.
func TestManifestSourceAndProposedAgent(t *testing.T) {
	m := Manifest()
	if len(m.Sources) != 1 || m.Sources[0].ID != SourceID || m.Sources[0].Poll == nil {
		t.Fatalf("sources: %+v", m.Sources)
	}
	var tools []string
	for _, tool := range m.Tools {
		tools = append(tools, tool.Spec().Name)
	}
	if len(m.Agents) != 1 || !slices.Contains(m.Agents[0].Roles, TriageRole) {
		t.Fatalf("proposed agents: %+v", m.Agents)
	}
	for _, name := range m.Agents[0].Tools {
		if !slices.Contains(tools, name) {
			t.Errorf("the proposed agent's grant names %s, which the plugin does not have (%v)", name, tools)
		}
	}
}
