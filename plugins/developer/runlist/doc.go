// Package runlist is the pure decision behind the developer plugin's run tool (seed 000):
// given one command string, the workspace, the directory to run in and the agent's mode, it
// answers auto, gated (with the card's one sentence, naming the program and the flag that
// decided) or refused (with the rule), and the argument vector that would be spawned. It
// runs nothing and touches no file except through the FS it is given.
//
// What each part implements:
//
//   - Decide (decide.go) is §3's "How the mode becomes a tier" for developer.run: "ask gates
//     every write and every command; edit gates every command …; run lets a command
//     through as auto only when §5's allowlist admits it … and gates everything else,
//     naming the program and the flag that decided." And §2: a cwd that "resolves outside
//     [the workspace] … is refused before any tool runs", as is one under the paths §2
//     protects "even when a workspace is placed above them".
//   - Split and the plain check (split.go) are §4's "There is no shell. The command is split
//     into words and spawned as a program and an argument vector" and §5 item 1: "It is
//     plain. Words and quotes, and no character a shell reads as more than text: no $,
//     backtick, ~, |, ;, &, <, >, (, ), {, }, [, ], newline or backslash. (* and ? are text
//     here …) Anything else is gated with “not a plain command”."
//     The reading is core/cmdline's, the one the permission engine's command(...) rules
//     use, and stricter than the seed's "* and ? are text here": a wildcard (* ?), a
//     comment (#) or a history character (^ !) is text only in quotes, and a first word a
//     shell would read as an assignment or a keyword is not plain.
//   - The table (table.go) and its reader (grammar.go, find.go) are §5 item 2: "Its program
//     is on the run list, and every flag it is given is in that program's own grammar, and
//     its operands are of the kind that program takes. A flag that is not in the table is
//     gated by name, and --flag=value, --flag value, -fvalue, -f=value and -abc are all
//     read as the flags they are … An operand that begins with a dash is refused even after
//     --", with "The list, exactly as the code has it".
//   - Paths (path.go) are §5 item 3, lexically: "Every path — operand or flag value —
//     resolves inside the workspace: not absolute, no .., no ~ …, and resolved against the
//     directory the command will run in".
//   - Resolution (resolve.go) is the same item on the filesystem, given Input.Root (the
//     workspace's confinement): the cwd, and every path the table reads — operands,
//     path-valued flags, Python module names (python -m, unittest's names, pytest -p),
//     the directories diff reads following links — is walked with no symbolic link
//     allowed (§2, §9), dangling or not; a formatter that writes (prettier --write, eslint
//     --fix, ruff format, black, go fmt) writes nothing under .git or where git runs hooks
//     from. A command the table does not admit, in any mode and remembered or not, has
//     every reading of every word looked at the same way. A link is a refusal: a card
//     showing home/.bashrc would tell the owner of a path inside the workspace.
//   - The allowances (allowance.go) are §5's "Two more allowances turn on a file being
//     there": "An install that only reproduces the lockfile" and "npx of the project's own
//     binary".
//   - Remembered (remembered.go) is §3's "Remembering an answer": "Either exactly this argv,
//     or any command that begins the way this one does … auto in edit and run mode and
//     never in ask, … matched on the argv that will be spawned (so only a plain command can
//     ever be remembered), … bound to the agent and the directory". Storage is elsewhere.
//
// Where §5 says a thing is "refused" inside a command (a dash operand, a flag not in the
// table), this package answers Gated: §3 has run mode gate "everything else", and §5 ends
// "Everything else asks". Refused is kept for what no approval can make runnable: a cwd
// outside the workspace, under a protected path, through a link or not a directory; a path
// through a link; a write under .git or a hooks directory; a command that cannot be split;
// an empty command; a workspace that is not absolute.
package runlist
