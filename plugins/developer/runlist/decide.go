package runlist

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"buddi/core/cmdline"
	"buddi/plugins/developer/confine"
)

// Mode is the agent's developer mode (§3), read from its workspace record on every call.
type Mode string

// The three modes of §3.
const (
	// ModeAsk: "every write and every command is gated".
	ModeAsk Mode = "ask"
	// ModeEdit: "reads, searches, edits and writes inside the workspace are auto; commands
	// are gated" — except a remembered command, which is auto in edit and run.
	ModeEdit Mode = "edit"
	// ModeRun: "a short, pinned list of commands runs inside the workspace without a card
	// … Everything else still asks." The default mode of a new workspace.
	ModeRun Mode = "run"
)

// ParseMode reads "ask", "edit" or "run".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAsk, ModeEdit, ModeRun:
		return m, nil
	}
	return "", fmt.Errorf("runlist: mode %q is not one of ask, edit, run", s)
}

// Kind is a verdict's kind.
type Kind uint8

// The three verdicts. The zero Kind is Gated, so a Verdict left unset never runs.
const (
	// Gated: the command runs only after the owner approves its card.
	Gated Kind = iota
	// Auto: the command runs without a card.
	Auto
	// Refused: the command does not run, whatever the owner says; Reason names the rule.
	Refused
)

// String returns "gated", "auto" or "refused".
func (k Kind) String() string {
	switch k {
	case Auto:
		return "auto"
	case Refused:
		return "refused"
	}
	return "gated"
}

// MarshalText renders the kind as String does, for JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Rule names what decided a verdict.
type Rule string

// The rules. Each verdict carries exactly one.
const (
	// RuleRunList: §5's table admits the command (auto).
	RuleRunList Rule = "run-list"
	// RuleLockfileInstall: an install that only reproduces the lockfile (auto).
	RuleLockfileInstall Rule = "lockfile-install"
	// RuleLocalNpx: npx of the project's own binary (auto).
	RuleLocalNpx Rule = "local-npx"
	// RuleRemembered: the owner remembered this command on a card (auto).
	RuleRemembered Rule = "remembered"

	// RuleAskMode: ask mode gates every command.
	RuleAskMode Rule = "ask-mode"
	// RuleEditMode: edit mode gates every command not remembered.
	RuleEditMode Rule = "edit-mode"
	// RuleBadMode: the mode is not one of ask, edit, run (gated).
	RuleBadMode Rule = "bad-mode"
	// RuleNoWorkspace: the agent has no workspace (§3: gated, with the rule named).
	RuleNoWorkspace Rule = "no-workspace"
	// RuleNotPlain: the command holds a character a shell reads as more than text (§5 item 1).
	RuleNotPlain Rule = "not-plain"
	// RuleProgramPath: the program is named by a path, not a name.
	RuleProgramPath Rule = "program-path"
	// RuleNotListed: the program is not on the run list.
	RuleNotListed Rule = "not-listed"
	// RuleSubcommand: the subcommand is missing or not the row's.
	RuleSubcommand Rule = "subcommand"
	// RuleUnknownFlag: a flag not in the program's grammar ("gated by name").
	RuleUnknownFlag Rule = "unknown-flag"
	// RuleFlagValue: a flag's value is not what the table says it is, or a flag that takes
	// none was given one.
	RuleFlagValue Rule = "flag-value"
	// RuleMissingValue: a flag that takes a value ends the command.
	RuleMissingValue Rule = "missing-value"
	// RuleDashOperand: an operand that begins with a dash, even after --.
	RuleDashOperand Rule = "dash-operand"
	// RuleOperand: an operand of the wrong kind, or too many or too few.
	RuleOperand Rule = "operand"
	// RulePathAbsolute: a path that is absolute (§5 item 3).
	RulePathAbsolute Rule = "path-absolute"
	// RulePathClimbs: a path with a .. component (§5 item 3).
	RulePathClimbs Rule = "path-climbs"
	// RuleProtected: a path under one §2 refuses even inside a workspace, or a run
	// directory that holds one. Not even a remembered command gets past it.
	RuleProtected Rule = "protected"
	// RuleInstallPackage: an install that names a package.
	RuleInstallPackage Rule = "install-package"
	// RuleInstallFlag: an install flag beyond the frozen, offline and no-scripts ones.
	RuleInstallFlag Rule = "install-flag"
	// RuleLockfile: an install with no matching lockfile in the command's directory.
	RuleLockfile Rule = "lockfile"
	// RuleNpx: npx with no binary, or one that is not a plain name.
	RuleNpx Rule = "npx"
	// RuleNpxMissing: npx of a binary not in node_modules/.bin up to the workspace root.
	RuleNpxMissing Rule = "npx-missing"

	// RuleSymlink: a path the command names goes through a symbolic link inside the
	// workspace, a dangling one included, or a directory a program reads following links
	// holds one (refused, in every mode: §2, §9).
	RuleSymlink Rule = "symlink"
	// RuleNoWrite: a program that writes the files it is given is given one under .git or
	// a directory git runs hooks from (refused).
	RuleNoWrite Rule = "no-write"
	// RuleUnchecked: a path could not be checked on the filesystem, or the command names
	// more than are checked (gated).
	RuleUnchecked Rule = "unchecked"

	// RuleBadWorkspace: the workspace is not an absolute path (refused).
	RuleBadWorkspace Rule = "bad-workspace"
	// RuleCwdOutside: the cwd resolves outside the workspace (§2: refused before any tool
	// runs).
	RuleCwdOutside Rule = "cwd-outside"
	// RuleCwdProtected: the cwd is under a path §2 protects (refused).
	RuleCwdProtected Rule = "cwd-protected"
	// RuleCwdSymlink: the cwd goes through a symbolic link (refused).
	RuleCwdSymlink Rule = "cwd-symlink"
	// RuleCwdMissing: the cwd is not an existing directory (refused).
	RuleCwdMissing Rule = "cwd-missing"
	// RuleEmpty: the command has no words (refused).
	RuleEmpty Rule = "empty"
	// RuleUnsplittable: an unterminated quote or a NUL byte: no argv can be made (refused).
	RuleUnsplittable Rule = "unsplittable"
)

// Input is one call of the run tool, and what tierFor knows when it decides it.
type Input struct {
	// Command is the command string exactly as the tool receives it.
	Command string
	// Workspace is the agent's workspace directory, absolute; "" when it has none.
	Workspace string
	// Cwd is the directory to run in: "" for the workspace root, a path relative to the
	// workspace, or an absolute path inside it.
	Cwd string
	// Mode is the agent's mode, read from its record on this call.
	Mode Mode
	// Agent identifies the agent, for matching Remembered.
	Agent string
	// Remembered is the owner's remembered commands; those of other agents or other
	// directories are ignored.
	Remembered []Remembered
	// FS is the workspace's files, for the lockfile-install and local-npx allowances; nil
	// means neither allowance applies.
	FS FS
	// Protected are absolute paths refused even inside the workspace (§2): HomeProtected
	// of the owner's home, buddi's data directory and the vault. Nil protects nothing.
	Protected []string
	// Root is the workspace's confinement. With it, the cwd and every path the command
	// names are resolved on the filesystem (resolve.go): a symbolic link on the way is a
	// refusal, and Workspace is Root.Dir(). Nil checks paths only as text, which no tool
	// that spawns may rely on.
	Root *confine.Root
}

// Verdict is what the run tool gets for a command.
type Verdict struct {
	// Kind is auto, gated or refused.
	Kind Kind
	// Rule names what decided.
	Rule Rule
	// Reason is one sentence for the card (gated), the refusal (refused) or the log (auto),
	// naming the program and the flag or word that decided.
	Reason string
	// Program is argv[0], or "" when there is no argv.
	Program string
	// Flag is the flag that decided, as the table spells it (-R, --include, -m), or "".
	Flag string
	// Word is the word of the command that decided (an operand, an unplain word, a flag as
	// written), or "".
	Word string
	// Argv is what would be spawned, with no shell; nil when the command cannot be split.
	Argv []string
	// Dir is the absolute directory the command would run in; "" when refused before it
	// was resolved.
	Dir string
	// Plain says the command is plain (§5 item 1); only a plain command can be remembered.
	Plain bool
}

// Decide answers what the run tool does with in.Command: auto, gated with the card's
// reason, or refused with the rule. It reads no files but through in.FS, runs nothing, and
// never panics.
func Decide(in Input) Verdict {
	v := decide(in)
	v.Reason = printable(v.Reason)
	return v
}

// printable escapes every character of s that does not print, so that a reason is one line
// the card shows as it is.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !unicode.IsPrint(r)) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !unicode.IsPrint(r)) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// decide is Decide before its reason is made printable.
func decide(in Input) Verdict {
	var v Verdict
	line, splitErr := cmdline.Split(in.Command)
	if splitErr == nil {
		v.Argv = line.Argv
		v.Plain = line.Plain()
	}
	if len(v.Argv) > 0 {
		v.Program = v.Argv[0]
	}
	name := v.Program
	if name == "" {
		name = "the command"
	}
	set := func(k Kind, r Rule, format string, args ...any) Verdict {
		v.Kind, v.Rule, v.Reason = k, r, fmt.Sprintf(format, args...)
		return v
	}
	from := func(k Kind, fd *finding) Verdict {
		v.Kind, v.Rule, v.Reason, v.Flag, v.Word = k, fd.rule, fd.reason, fd.flag, fd.word
		return v
	}

	if in.Workspace == "" {
		return set(Gated, RuleNoWorkspace, "%s: this agent has no workspace, so every command asks", name)
	}
	if !filepath.IsAbs(in.Workspace) {
		return set(Refused, RuleBadWorkspace, "%s: the workspace %q is not an absolute path", name, in.Workspace)
	}
	ws := filepath.Clean(in.Workspace)
	var rel string
	if in.Root != nil {
		ws = in.Root.Dir()
		r, fd := resolveDir(in.Root, name, in.Cwd)
		if fd != nil {
			return from(Refused, fd)
		}
		rel = r
	} else {
		r, ok := resolveCwd(ws, in.Cwd)
		if !ok {
			v.Word = in.Cwd
			return set(Refused, RuleCwdOutside, "%s: the directory %q resolves outside the workspace %q", name, in.Cwd, ws)
		}
		rel = r
	}
	pl := place{workspace: ws, rel: rel, protected: cleanAll(in.Protected)}
	v.Dir = pl.dir()
	if pr := pl.protectedBy(v.Dir); pr != "" {
		v.Word = in.Cwd
		return set(Refused, RuleCwdProtected, "%s: the directory %q is under %q, which is refused even inside a workspace", name, v.Dir, pr)
	}
	if splitErr != nil {
		return set(Refused, RuleUnsplittable, "the command cannot be split into words: %s", strings.TrimPrefix(splitErr.Error(), "cmdline: "))
	}
	if len(v.Argv) == 0 {
		return set(Refused, RuleEmpty, "the command is empty, so there is nothing to run")
	}
	switch in.Mode {
	case ModeAsk, ModeEdit, ModeRun:
	default:
		return set(Gated, RuleBadMode, "%s: the mode %q is not one of ask, edit, run, so every command asks", name, in.Mode)
	}
	if fd := protectedScan(v.Argv, pl); fd != nil {
		return from(Gated, fd)
	}
	// What the run list makes of it, in every mode: which words are paths is its answer.
	listed, fd, uses := runList(v.Argv, pl, in.FS)
	// The paths on the filesystem: a link refuses the command in every mode; a path that
	// could not be checked keeps it from running without a card.
	var pathFd *finding
	if in.Root != nil {
		c := checker{root: in.Root, rel: pl.rel, prog: name}
		if listed != nil && v.Plain && uses != nil {
			pathFd = c.uses(uses.list)
		} else {
			pathFd = c.words(v.Argv)
		}
		if pathFd != nil && pathFd.refuse {
			return from(Refused, pathFd)
		}
	}
	if in.Mode == ModeAsk {
		return set(Gated, RuleAskMode, "%s: ask mode asks before every command", name)
	}
	remembered := func() (Verdict, bool) {
		if !v.Plain {
			return v, false
		}
		for _, r := range in.Remembered {
			if r.Matches(in.Agent, ws, v.Argv) {
				if pathFd != nil {
					// The owner allowed the command, not a path that could not be checked.
					return from(Gated, pathFd), true
				}
				how := "exactly"
				if r.Prefix {
					how = "by its beginning"
				}
				v.Word = strings.Join(r.Argv, " ")
				return set(Auto, RuleRemembered, "%s: the owner allowed %q %s in this workspace", name, v.Word, how), true
			}
		}
		return v, false
	}
	if in.Mode == ModeEdit {
		if rv, ok := remembered(); ok {
			return rv
		}
		return set(Gated, RuleEditMode, "%s: edit mode asks before every command", name)
	}
	// Run mode.
	if !v.Plain {
		v.Word = line.Impurity.Word
		return set(Gated, RuleNotPlain, "%s: not a plain command: %s", name, line.Impurity)
	}
	if listed != nil && pathFd == nil {
		return set(Auto, listed.rule, "%s", listed.reason)
	}
	if rv, ok := remembered(); ok {
		return rv
	}
	if listed != nil {
		return from(Gated, pathFd)
	}
	return from(Gated, fd)
}

// listedPaths are the paths of a command the table admits, as it read them. Nil for an
// allowance, whose words are not the table's to read (npx's belong to the project's own
// binary): then every word is looked at.
type listedPaths struct{ list []pathUse }

// runList is §5's whole list: the table, then the two allowances that look at files.
func runList(argv []string, pl place, files FS) (*allowed, *finding, *listedPaths) {
	if spec, sub, rest, ok := installForm(argv); ok {
		a, fd := lockfileInstall(spec, argv, sub, rest, pl, files)
		return a, fd, nil
	}
	if argv[0] == "npx" {
		a, fd := localNpx(argv, pl, files)
		return a, fd, nil
	}
	display, uses, fd := admit(argv, pl)
	if fd != nil {
		return nil, fd, nil
	}
	return &allowed{rule: RuleRunList, reason: display + " is on the run list"}, nil, &listedPaths{list: uses}
}

// protectedScan keeps §2's protected paths out of reach even of a remembered command: a
// run directory that holds one, or any word that, read as a path (itself, after an =,
// after a single-dash letter), falls under one.
func protectedScan(argv []string, pl place) *finding {
	if len(pl.protected) == 0 {
		return nil
	}
	dir := pl.dir()
	for _, pr := range pl.protected {
		if _, ok := within(dir, pr); ok {
			return &finding{rule: RuleProtected, word: argv[0], reason: fmt.Sprintf(
				"%s: the directory %q holds %q, which is refused even inside a workspace", argv[0], dir, pr)}
		}
	}
	for _, w := range argv {
		for _, r := range readings(w) {
			if r == "" {
				continue
			}
			abs := filepath.Clean(r)
			if !filepath.IsAbs(r) {
				abs = pl.abs(r)
			}
			if pr := pl.protectedBy(abs); pr != "" {
				return &finding{rule: RuleProtected, flag: flagOf(w), word: w, reason: fmt.Sprintf(
					"%s: %q reaches %q, which is refused even inside a workspace", argv[0], w, pr)}
			}
		}
	}
	return nil
}

// cleanAll cleans absolute paths and drops the rest.
func cleanAll(ps []string) []string {
	var out []string
	for _, p := range ps {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}
