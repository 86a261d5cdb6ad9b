package anthropic_test

import (
	"strings"
	"testing"

	"buddi/runtime/provider"
	"buddi/runtime/providertest"
)

// Native web search: the request offers the provider's web_search server tool (with its
// max_uses) beside buddi's own tools; the searches the provider ran come back in
// Result.Searches with their queries and pages (or the error code), and are neither tool
// calls buddi answers nor text of the message.
func TestNativeWebSearch(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.srv.Script(providertest.Reply{
		Searches: []providertest.Search{
			{Query: "library opening hours", Results: []providertest.SearchHit{{URL: "https://library.example/hours", Title: "Hours"}, {URL: "https://b.example/", Title: "B"}}},
			{Query: "second try", ErrorCode: "max_uses_exceeded"},
		},
		Text: []string{"It opens at nine."},
	})
	req := ask("when does the library open?")
	req.WebSearch = &provider.WebSearch{MaxUses: 3}
	events, res, err := collect(t, b.p, req)
	if err != nil {
		t.Fatal(err)
	}
	body := string(b.srv.Served()[0].Body)
	if !strings.Contains(body, `{"max_uses":3,"name":"web_search","type":"web_search_20250305"}`) || !strings.Contains(body, `"name":"developer__run"`) {
		t.Errorf("the request's tools: %s", body)
	}
	if len(res.Searches) != 2 {
		t.Fatalf("searches %+v", res.Searches)
	}
	s0, s1 := res.Searches[0], res.Searches[1]
	if s0.Query != "library opening hours" || len(s0.Results) != 2 || s0.Results[0].URL != "https://library.example/hours" || s0.Results[0].Title != "Hours" || s0.Error != "" || s0.ID == "" {
		t.Errorf("first search %+v", s0)
	}
	if s1.Query != "second try" || s1.Error != "max_uses_exceeded" || len(s1.Results) != 0 {
		t.Errorf("second search %+v", s1)
	}
	if len(res.ToolCalls()) != 0 || res.Text() != "It opens at nine." || len(res.Message.Parts) != 1 {
		t.Errorf("message %+v", res.Message)
	}
	var searched []string
	for _, ev := range events {
		if ev.Type == provider.EventToolCallStart || ev.Type == provider.EventToolCallEnd {
			t.Errorf("a native search was streamed as a tool call: %+v", ev)
		}
		if ev.Type == provider.EventSearch {
			searched = append(searched, ev.Search.Query)
		}
	}
	if strings.Join(searched, "|") != "library opening hours|second try" {
		t.Errorf("search events %v: each search is an event as its result arrives", searched)
	}
	// Without WebSearch, no server tool is offered.
	b.srv.Script(providertest.Text("ok"))
	if _, _, err := collect(t, b.p, ask("hi")); err != nil {
		t.Fatal(err)
	}
	if body := string(b.srv.Served()[1].Body); strings.Contains(body, "web_search") {
		t.Errorf("web search offered unasked: %s", body)
	}
}

// Native search is offered only where Anthropic's own service answers, for the models its
// search serves: not through a gateway, not for a model it does not know.
func TestNativeWebSearchWhereItIsServed(t *testing.T) {
	t.Parallel()
	if !setup(t, options{}).p.Capabilities("claude-sonnet-4-5").NativeWebSearch {
		t.Error("the default base URL and a Sonnet 4 model: no native search")
	}
	if setup(t, options{}).p.Capabilities("claude-2.1").NativeWebSearch {
		t.Error("an old model: native search")
	}
	if setup(t, options{baseURL: "https://gateway.example/anthropic"}).p.Capabilities("claude-sonnet-4-5").NativeWebSearch {
		t.Error("a gateway: native search")
	}
}
