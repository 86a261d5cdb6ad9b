// Package web is the compiled-in web plugin (seed 004, "the web plugin"): a capability, not
// a persona. Its tools are web.read, web.search and web.status, all auto, and no agent holds
// them unless its own tools: line names them.
//
// web.read fetches one page through the address guard (core/netguard): the guard is the
// transport's dialer, so the address it approves is the address dialled, and every redirect
// is walked by hand through the whole guard. The read is bounded in time ([DefaultTimeout]
// for the whole of it, redirects and body included) and in bytes ([DefaultMaxBytes] of body,
// counted on the stream: a Content-Length is never believed), and only HTML and plain text
// are read. The text is extracted by internal/readable (golang.org/x/net/html): script, style,
// svg, noscript, template, iframe, the page's chrome (head, nav, header, footer, aside),
// elements marked hidden, comments with their contents and every attribute are dropped;
// headings, paragraphs, list items and links' text are kept, white space collapsed, and the
// text bounded ([DefaultMaxText]).
//
// Everything fetched is untrusted text ([Rule]): evidence, never instructions. The rule is in
// every tool description and in every result, whose items each carry their source and URL.
//
// web.search asks the owner's search backend (BUDDI_SEARCH_PROVIDER=searxng with
// BUDDI_SEARCH_URL, a self-hosted SearXNG's JSON API). That backend is the owner's own
// configuration, not a model's choice, and usually lives on the owner's machine or network,
// which the guard exists to refuse; so it is asked directly, with only the query coming from
// the model. Other providers (Tavily, Brave) and the Anthropic wire's native search are not
// in this build.
//
// web.fetches, in the plugin's own schema, is the audit log of every read and search: agent,
// time, purpose, host, outcome (ok, blocked, error, too_large, not_text), status and bytes,
// never a body. Its blocked rows record attempts to reach a place an agent may not.
// buddi web read runs the same path for the owner, recorded as "owner".
package web
