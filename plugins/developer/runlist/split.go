package runlist

import "buddi/core/cmdline"

// This file reads the command string the run tool receives into the words it would spawn,
// and finds what, if anything, keeps the string from being plain (§5 item 1). The reading
// is core/cmdline's, the same one the permission engine's command(...) rules use, so that
// the words judged, the words an allow rule matches and the words spawned are one.

// Errors from Split: a command that cannot be turned into an argument vector at all.
var (
	// ErrUnterminatedQuote is a command whose last quote is never closed.
	ErrUnterminatedQuote = cmdline.ErrUnterminatedQuote
	// ErrNUL is a command holding a NUL byte, which no argument vector can carry.
	ErrNUL = cmdline.ErrNUL
)

// Split splits a command into the words it would spawn, with no shell (cmdline.Split):
// words are separated by unquoted spaces, tabs and line breaks; single and double quotes
// group and are removed; every other character is itself. It fails only when no argument
// vector can be made: an unterminated quote or a NUL byte. An empty or blank command gives
// no words and no error.
func Split(command string) ([]string, error) {
	l, err := cmdline.Split(command)
	if err != nil {
		return nil, err
	}
	return l.Argv, nil
}
