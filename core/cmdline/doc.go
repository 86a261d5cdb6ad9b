// Package cmdline reads a command string into the words a program would be given, the one
// way buddi does it: the permission engine's command(...) rules and the command they
// match (core/permission), and the developer plugin's run tool, which judges and spawns
// those words with no shell (plugins/developer/runlist, plugins/developer/spawn).
//
// There is no shell. Words are separated by unquoted spaces and tabs (and line breaks,
// which keep a command from being plain); single and double quotes group and are removed;
// every other character is the character it is, the backslash included. A command is
// plain when it holds nothing a shell would read as more than text and nothing the reader
// is unsure of (see [Split]): only a plain command can match an allow rule or run without
// a card, so that the words judged are exactly the words that run, whether or not a shell
// ever reads them.
//
// [Reader] is the quote and character reader underneath: it says, character by character,
// what is text, what separates words, where quotes open and close, and what is more than
// text. [Split] reads words with it strictly; the permission engine's deny-side scanner
// reads shell syntax with it conservatively.
package cmdline
