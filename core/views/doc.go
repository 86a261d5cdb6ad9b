// Package views turns a tool's result into what the canvas draws: a view, one of a closed set
// of generic renderers with the data it needs, taken from the result (seed 004, "The canvas
// and view descriptors").
//
// # The renderers
//
// timeseries, table, bars, keyvalue, document, diff, terminal, image, preview, envelope and
// structured: shapes, never domains. The names a plugin author may know from elsewhere map
// onto them (Canonical): list is a table (a list of scalars is a one-column table), card and
// key-value are keyvalue, code is terminal (monospaced text), markdown is document, link and
// link preview are preview. A descriptor naming anything else is a startup error; a view
// received with a renderer this build does not know is drawn as structured.
//
// # Descriptors
//
// A plugins.ViewDescriptor names a tool, a renderer and paths into the result: each path is
// dotted keys and indexes ("results", "page.items[0].rows", "" for the result itself), never
// an expression. Check validates one and names the field that is wrong.
//
// # Precedence
//
// Resolve picks, highest first: an explicit canvas.show from the agent; the plugin's
// descriptor for the tool; inference from the result's shape alone (an array of objects that
// mostly agree on their keys is a table, a flat object of scalars is a keyvalue record, text
// with diff hunks is a diff, line-structured text is a document). A call waiting for the
// owner is drawn as its approval envelope. Inference never guesses meaning: a number is
// printed as the result wrote it, never as money.
//
// # Earning a tab
//
// A view is returned only when it has something to draw: rows, points, a document, a diff
// with hunks, a record carrying a figure. An empty result, a receipt or a wall of prose
// gives none; a failure always does.
//
// Views are built from results that were scrubbed where they left the tool; whoever carries
// one out of core scrubs it again with the same redactor (Scrub).
package views
