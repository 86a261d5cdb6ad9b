// Package artifacts is the compiled-in artifacts plugin (seed 004, "Artifacts are core's"):
// the agent-facing reads and writes over core's artifact store (core/artifact). It owns no
// schema: the files and their rows are core's, so removing the plugin takes none of the
// owner's files, and approvals, transcripts and runs keep referencing them.
//
// Its tools, all auto:
//
//   - artifacts.list: the latest version of each artifact the agent may read, newest first,
//     with how many versions it has; by name, or every version of one artifact; bounded.
//   - artifacts.read: one exact version. Text is returned bounded in bytes (cut on a
//     character boundary, with an offset to read on), with its media type; a binary file
//     gives its description only.
//   - artifacts.write: a new artifact, or a new version of one the agent made. It only ever
//     adds a version, never overwrites one, and only over the latest (a writer that read an
//     older version is told which is the latest), so it needs no approval.
//   - artifacts.attach: shows one version to the owner in the turn: its result data is
//     {renderer: "file", artifact, name, media_type, …}, drawn by the surfaces as a link to
//     download (and, for an image, the picture).
//
// Who reads what: an agent reads the versions it made itself, and the versions made in the
// conversation the call runs in (whoever made them: the owner's uploads, a colleague's
// screenshot). Anything else, another agent's private file above all, is refused in one
// sentence that does not tell whether it exists. New versions are written only over the
// agent's own artifacts.
package artifacts
