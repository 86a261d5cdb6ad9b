package run

// surfaceFacts is the paragraph every run gets about where the owner is (seed 004, "What
// the agent is told about the surface"): facts only, no rules.
func surfaceFacts(surface string) string {
	switch surface {
	case "telegram":
		return "Where the owner is: Telegram. Markdown renders partly; tables do not. A message holds at most 4096 characters. " +
			"Files and buttons exist; there is no canvas. The owner can answer. " +
			"The owner reads this on a phone, between other things: lead with the point, keep to a few short sentences, and offer detail rather than giving it."
	case "dashboard":
		return "Where the owner is: the buddi dashboard in a browser. Markdown and tables render. There is no message cap. " +
			"Buttons exist; files and a canvas do not yet. The owner can answer."
	case "terminal":
		return "Where the owner is: a terminal (buddi chat or buddi ask). Markdown is shown as plain text; tables are not drawn. " +
			"There is no message cap. There are no files, buttons or canvas. The owner can answer."
	}
	return "Where the owner is: no surface is watching this run (it runs unattended). Nobody can answer until the owner looks."
}
