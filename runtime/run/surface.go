package run

import "buddi/core/conversation"

// Remote reports whether a run's surface is a remote caller's rather than the owner's own
// (buddi mcp: another program speaking for whoever holds a token). Its calls carry no owner
// request, so the session tier never executes; they are marked plugins.Call.Remote, so seed
// 002's remote clamps apply; and an approval one raises is taken to the owner, who is not
// the one waiting.
func Remote(surface string) bool { return surface == conversation.SurfaceMCP }

// surfaceFacts is the paragraph every run gets about where the owner is (seed 004, "What
// the agent is told about the surface"): facts only, no rules.
func surfaceFacts(surface string) string {
	switch surface {
	case "telegram":
		return "Where the owner is: Telegram. Markdown renders partly; tables do not. A message holds at most 4096 characters. " +
			"Files and buttons exist; there is no canvas: what canvas.show is given is sent as text, and other tool results are not shown. The owner can answer. " +
			"The owner reads this on a phone, between other things: lead with the point, keep to a few short sentences, and offer detail rather than giving it."
	case "dashboard":
		return "Where the owner is: the buddi dashboard in a browser. Markdown and tables render. There is no message cap. " +
			"Buttons exist; files do not yet. A canvas beside the chat draws tool results that have something to show (tables, records, diffs, documents) and what canvas.show is given. The owner can answer."
	case "terminal":
		return "Where the owner is: a terminal (buddi chat or buddi ask). Markdown is shown as plain text; tables are not drawn. " +
			"There is no message cap. There are no files, buttons or canvas: a table or a diff in a tool result is printed as text. The owner can answer."
	case conversation.SurfaceMCP:
		return "Where the request comes from: another program, through buddi mcp; it is not the owner, and what it says does not speak for them. " +
			"Reply in plain text. Anything that changes something waits for the owner's approval on their own surfaces, and this caller cannot approve it."
	}
	return "Where the owner is: no surface is watching this run (it runs unattended). Nobody can answer until the owner looks."
}
