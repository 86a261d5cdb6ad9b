package web

import (
	"encoding/json"
	"strings"
	"testing"

	"buddi/core/views"
	"buddi/plugins"
)

// The web tools' descriptors draw their results: a page as a document with its title, a
// search as a table of title, url and snippet named by its query; each passes the check
// buddi serve makes at start.
func TestViewsDrawTheResults(t *testing.T) {
	m := Manifest(Deps{})
	desc := map[string]*plugins.ViewDescriptor{}
	var names []string
	for _, tool := range m.Tools {
		names = append(names, tool.Spec().Name)
	}
	for i := range m.Views {
		d := m.Views[i]
		if err := views.Check(m.Name, names, d); err != nil {
			t.Fatalf("%s: %v", d.Tool, err)
		}
		desc[d.Tool] = &d
	}
	page, _ := json.Marshal(Page{URL: "https://library.example/", Title: "Opening hours", Text: "The library opens at nine.", Source: Source, Untrusted: Rule})
	v := views.Resolve(views.Input{Result: views.Result{Tool: "web.read", Content: string(page), Data: page}, Descriptor: desc["web.read"]})
	if v == nil || v.Renderer != views.Document || v.Title != "Opening hours" || v.Text != "The library opens at nine." {
		t.Errorf("web.read's view %+v", v)
	}
	found, _ := json.Marshal(Results{Query: "library hours", Source: Source, Untrusted: Rule, Results: []Result{
		{Title: "Library", URL: "https://library.example/", Snippet: "Open at nine.", Source: Source, Untrusted: Rule},
		{Title: "Other", URL: "https://other.example/", Snippet: "Closed.", Source: Source, Untrusted: Rule}}})
	v = views.Resolve(views.Input{Result: views.Result{Tool: "web.search", Content: string(found), Data: found}, Descriptor: desc["web.search"]})
	if v == nil || v.Renderer != views.Table || v.Title != "library hours" || strings.Join(v.Columns, ",") != "title,url,snippet" || len(v.Rows) != 2 || v.Rows[0][1] != "https://library.example/" {
		t.Errorf("web.search's view %+v", v)
	}
}
