// Package memory is the compiled-in memory plugin (seed 004, "Memory"): the owner's
// preferences and the agents' notes, in the plugin's own schema. Conversation history
// (core.messages) and run checkpoints (the event log) are core's; this plugin keeps the
// other two of the four kinds of memory, and keeps them apart.
//
// Preferences are key/value statements, written by the owner (the dashboard's Memory page)
// or proposed by an agent (memory.prefer), and versioned: a correction is a new revision and
// the one before it is marked superseded, never overwritten and never deleted. Each revision
// keeps who wrote it, when, and from which conversation and run.
//
// Notes are what an agent writes down (memory.remember), with their provenance: the agent,
// the conversation, the run, a scope that is private to the agent unless the call shares the
// note explicitly, an optional expiry, and a soft delete (memory.forget for the agent's own,
// the Memory page for any) that keeps the row for the owner's audit and never recalls it.
//
// Recall (memory.recall) is a keyword search: PostgreSQL's full-text search
// (websearch_to_tsquery over a stored tsvector) for the words as written, and pg_trgm's word
// similarity for each keyword, so a misspelled word still finds its note; a keyword in a
// script other than Latin is also found inside a longer word. Both search the note's text
// lowered by buddi, so case is ignored in every script whatever the database's locale, and
// a -excluded word or phrase keeps its notes out. An agent recalls
// its own private notes and the shared ones, never another agent's private notes, and never
// an expired or deleted note.
//
// Memory informs and never grants ([Rule]): a note may have come from hostile mail, so each
// recalled note carries where it came from, every result says so, and nothing here is
// permission, an approval or an instruction. Every memory tool is auto.
package memory
