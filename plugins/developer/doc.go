// Package developer is the developer plugin of seed 000: one agent, one workspace
// directory the owner grants, and a mode the owner chooses once. This package holds the
// manifest, the schema and its store, and the workspace, read, list, search, write and edit
// tools. Path confinement is [buddi/plugins/developer/confine] (§9), and the run list with
// the mode type is [buddi/plugins/developer/runlist] (§3, §5).
//
// # The workspace (§2)
//
// "A workspace is one directory the owner names, absolute, … recorded in the plugin's
// schema with the agent that owns it." developer.workspace sets it, gated in every mode;
// its card names the directory and what it holds: whether it is a repository root, a folder
// of several projects, or inside a repository; how many entries it has at its top level;
// the protected paths inside it; the workspace it replaces; the agent's mode; and §8's
// sentence. The directory is recorded with the links in its path resolved. A directory at
// or inside a protected path (~/.ssh, …, ~/.buddi, buddi's data directory, the vault) is
// refused; a directory above them is allowed and they stay refused inside it ("refused even
// when a workspace is placed above them"). Every filesystem touch goes through the
// workspace's confine.Root: a path that resolves outside, by .., by a link or by an
// absolute argument, is refused.
//
// # Modes and tiers (§3)
//
// Every tool declares tier session ("the strictest it will ever need, and what the grant is
// checked against") and narrows each call with TierFor, which reads the agent's workspace
// record and mode afresh on every call, so a mode the owner changes applies to the next
// call. The registry keeps the session checks on every call whatever TierFor answers.
//
//	tool                         ask     edit    run
//	developer.workspace          gated   gated   gated
//	developer.read/list/search   auto    auto    auto
//	developer.write/edit         gated   auto    auto
//	  .gitmodules, .gitattributes gated  gated   gated
//	  inside .git                refused refused refused
//	no workspace, or a path outside it, through a link or protected:
//	                             gated (TierFor), then refused by Describe before a card exists
//
// The reason is one sentence, and it is on the card ("Rule: …"). Only the owner sets the
// mode: [Store.SetMode] is for the owner's surfaces, and no tool calls it. No mode row
// means run, the default.
//
// # Tools and bounds (§4)
//
//   - read: 2,000 lines and 200 KB of line text per call, with line numbers; a binary file
//     (a NUL byte in its first 8,000 bytes) is refused with its size.
//   - list: a tree, 3 levels by default and 10 at most, 1,000 entries shown, leaving out
//     node_modules, .git and what the workspace's .gitignore files ignore.
//   - search: ripgrep when it is on buddi's PATH, the built-in search otherwise, over the
//     same files in the same order: 200 results as "path:line: text", each text cut at 500
//     bytes, files over 4 MB skipped and counted, and the built-in search reads 256 MB at
//     most. ripgrep gets --no-config, --no-follow and --no-ignore, an empty environment, and
//     the files by name after --; it traverses nothing itself.
//   - list and search examine at most 10,000 names and 32 levels; they step over symbolic
//     links and protected paths and say how many (§2: "the result saying how many entries
//     were skipped"); a link in the path asked for is a refusal.
//   - write and edit: content up to 1 MB; the file replaced or edited is read whole, up to
//     4 MB, to diff and hash it. The card carries the diff (400 lines or 32 KB shown) and
//     the hash of what it was computed against, as a precondition; Execute of an approved
//     card refuses a file that changed since. A gated write never runs without an approved
//     card. Writes are atomic through confine; .git is never written.
//
// write and edit implement plugins.PolicyDescriber: an edit, of the absolute target.
//
// # What it stores (§11)
//
// Schema developer (migrations/00001_developer.sql): workspaces, settings (the mode per
// agent), remembered_commands and processes. [Store] reads and writes the first three; the
// processes table waits for developer.start. File contents are never stored.
package developer
