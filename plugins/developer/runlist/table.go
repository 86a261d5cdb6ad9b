package runlist

// This file is the run list of §5 as data: one row per program (two for go, whose
// subcommands read flags differently), each with its subcommands, its flags and the type
// of each flag's value, and the kind of its operands. grammar.go reads a command against a
// row; nothing here is code.

// valueType is what a flag's value must be (§5 item 2).
type valueType uint8

const (
	// noValue: the flag takes no value; -f=v or --f=v is not auto.
	noValue valueType = iota
	// wordValue is a <word>: "carries no path separator at all".
	wordValue
	// globValue is a <glob>: "may carry one [separator] … but may not climb with .. or
	// begin with /".
	globValue
	// numValue is a <n>: "is digits".
	numValue
	// reValue is a <re>: "a pattern and is never resolved as a path".
	reValue
	// pathValue is a <path>: resolves inside the workspace against cwd (§5 item 3).
	pathValue
)

// String names the type as the table writes it.
func (v valueType) String() string {
	switch v {
	case wordValue:
		return "<word>"
	case globValue:
		return "<glob>"
	case numValue:
		return "<n>"
	case reValue:
		return "<re>"
	case pathValue:
		return "<path>"
	}
	return "no value"
}

// flagSpec is one flag of a row, spelled as the table spells it.
type flagSpec struct {
	name  string
	value valueType
}

// style is how a program's own parser reads its flags, so that every spelling is "read as
// the flag it is" by the program that will read it.
type style uint8

const (
	// getopt: GNU getopt_long, argparse, clap. -abc is -a -b -c; a short flag that takes a
	// value takes the rest of its word (-n5) or the next word; --long=v or --long v.
	// -f=v is read both ways (GNU getopt gives "=v", argparse and clap give "v"), and both
	// readings must pass the value's type.
	getopt style = iota
	// bundled: mri (vitest's cac) and yargs-parser (jest). -abc is -a -b -c, and the letters
	// after a short flag are more flags, not its value: a value comes after = or as the next
	// word.
	bundled
	// oneWord: Go's flag package and tsc. Each word is one flag, with one dash or two;
	// -name=v or -name v; no bundles.
	oneWord
	// expression: find. An optional starting path, then single-dash primaries, each
	// taking its own value words.
	expression
)

// operandKind is what a row's operands must be.
type operandKind uint8

const (
	// noOperands: "none".
	noOperands operandKind = iota
	// paths: every operand is a path inside the workspace.
	paths
	// scriptName: "at most one script name ([a-z0-9:_.-]+)".
	scriptName
	// bareWords: words with no path separator.
	bareWords
	// goPatterns: "./..., pkg/... or paths": a path, optionally ending in /... .
	goPatterns
	// makeTargets: "bare targets ([A-Za-z0-9:_.-]+; no VAR=)".
	makeTargets
	// patternThenPaths: "a pattern, then paths"; the pattern is a <re>.
	patternThenPaths
	// anyWords: "any words".
	anyWords
	// moduleOrFile is python's: -m and a module read by that module's row, or one file.
	moduleOrFile
)

// row is one line of the run list.
type row struct {
	// programs are the names this row admits, as argv[0].
	programs []string
	// subs are the subcommands; subRequired says argv[1] must be one of them, otherwise
	// argv[1] is one of them or is read as an ordinary word.
	subs        []string
	subRequired bool
	// otherSubs are words the program reads as its own other subcommands when they come
	// first; as a first operand they are not paths but commands the table does not list.
	otherSubs []string
	// style is how the program reads its flags.
	style style
	// flags is the row's whole grammar of flags; anything else is not auto.
	flags []flagSpec
	// operands is the kind of the operands; minOperands and maxOperands (-1: no limit)
	// bound their count, and unlessFlag, when given, lifts minOperands.
	operands    operandKind
	minOperands int
	maxOperands int
	unlessFlag  string
	// interspersed says the program reads flags after its first operand (GNU getopt's
	// permutation, argparse, clap, go test). Otherwise a dash word after the first operand
	// is an operand, and an operand that begins with a dash is not auto.
	interspersed bool
	// modules are python's -m modules, each read by the row of the same program name.
	modules []string
}

// table is §5's list, "exactly as the code has it".
var table = []row{
	{
		programs: []string{"node"}, style: getopt,
		flags:    []flagSpec{{"--test", noValue}},
		operands: paths, minOperands: 1, maxOperands: -1, unlessFlag: "--test",
		// node passes every word after the script to the script.
		interspersed: false,
	},
	{
		programs: []string{"npm", "pnpm", "yarn", "bun"},
		subs:     []string{"run", "test", "build", "lint", "typecheck"}, subRequired: true,
		style: getopt, flags: nil,
		// npm's option parser reads flags anywhere before a --.
		operands: scriptName, maxOperands: 1, interspersed: true,
	},
	{
		programs: []string{"python", "python3"}, style: getopt,
		operands: moduleOrFile,
		modules:  []string{"pytest", "unittest", "mypy", "ruff", "black"},
	},
	{
		programs: []string{"pytest"}, style: getopt,
		flags: []flagSpec{
			{"-q", noValue}, {"-x", noValue}, {"-v", noValue}, {"-k", wordValue},
			{"--maxfail", numValue}, {"-p", wordValue},
		},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"unittest"}, style: getopt,
		operands: bareWords, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"go"}, subs: []string{"test"}, subRequired: true, style: oneWord,
		flags:    []flagSpec{{"-v", noValue}, {"-run", reValue}},
		operands: goPatterns, maxOperands: -1,
		// go test reads its flags before and after the packages.
		interspersed: true,
	},
	{
		programs: []string{"go"}, subs: []string{"build", "vet", "fmt"}, subRequired: true, style: oneWord,
		flags:    []flagSpec{{"-v", noValue}, {"-run", reValue}},
		operands: goPatterns, maxOperands: -1,
		// Go's flag package stops at the first package.
		interspersed: false,
	},
	{
		programs: []string{"cargo"}, subs: []string{"test", "build", "check", "clippy", "fmt"}, subRequired: true,
		style:    getopt,
		flags:    []flagSpec{{"-v", noValue}, {"--release", noValue}, {"-run", reValue}},
		operands: bareWords, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"make"}, style: getopt, flags: nil,
		operands: makeTargets, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"tsc"}, style: oneWord,
		flags:    []flagSpec{{"-p", pathValue}, {"--project", pathValue}, {"--noEmit", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"vitest"}, subs: []string{"run"}, style: bundled,
		otherSubs: []string{"watch", "dev", "related", "bench", "init", "list", "typecheck", "help"},
		flags:     []flagSpec{{"-t", wordValue}},
		operands:  paths, maxOperands: -1, interspersed: true,
	},
	{
		// jest has no subcommands: a first "run" is read as a path pattern, which it is.
		programs: []string{"jest"}, subs: []string{"run"}, style: bundled,
		flags:    []flagSpec{{"-t", wordValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"eslint"}, style: getopt,
		flags:    []flagSpec{{"--fix", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"prettier"}, style: getopt,
		flags:    []flagSpec{{"--check", noValue}, {"--write", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"ruff"}, subs: []string{"check", "format"}, style: getopt,
		otherSubs: []string{"rule", "config", "linter", "clean", "version", "help", "analyze", "server", "generate-shell-completion"},
		flags:     []flagSpec{{"--check", noValue}, {"--fix", noValue}},
		operands:  paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"black", "mypy"}, style: getopt,
		flags:    []flagSpec{{"--check", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"ls"}, style: getopt,
		flags:    []flagSpec{{"-l", noValue}, {"-a", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"cat"}, style: getopt,
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"head", "tail"}, style: getopt,
		flags:    []flagSpec{{"-n", numValue}, {"-c", numValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"wc"}, style: getopt,
		flags:    []flagSpec{{"-l", noValue}, {"-c", noValue}, {"-w", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"grep"}, style: getopt,
		flags: []flagSpec{
			{"-n", noValue}, {"-i", noValue}, {"-r", noValue}, {"-E", noValue}, {"-F", noValue},
			{"-w", noValue}, {"-c", noValue}, {"-l", noValue}, {"--include", globValue},
		},
		operands: patternThenPaths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"rg"}, style: getopt,
		flags: []flagSpec{
			{"-n", noValue}, {"-i", noValue}, {"-w", noValue}, {"-l", noValue}, {"-c", noValue},
			{"-g", globValue}, {"-t", wordValue}, {"--no-follow", noValue},
		},
		operands: patternThenPaths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"find"}, style: expression,
		flags: []flagSpec{
			{"-name", globValue}, {"-iname", globValue}, {"-type", wordValue},
			{"-maxdepth", numValue}, {"-mindepth", numValue}, {"-path", globValue},
			{"-newer", pathValue}, {"-size", wordValue}, {"-not", noValue}, {"-o", noValue},
			{"-a", noValue},
		},
		operands: paths, maxOperands: 1,
	},
	{
		programs: []string{"diff"}, style: getopt,
		flags:    []flagSpec{{"-u", noValue}, {"-r", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"sort"}, style: getopt,
		flags:    []flagSpec{{"-n", noValue}, {"-r", noValue}, {"-u", noValue}},
		operands: paths, maxOperands: -1, interspersed: true,
	},
	{
		// uniq's second operand is the file it writes its output to, so it takes one.
		programs: []string{"uniq"}, style: getopt,
		flags:    []flagSpec{{"-c", noValue}},
		operands: paths, maxOperands: 1, interspersed: true,
	},
	{
		programs: []string{"echo"}, style: getopt,
		operands: anyWords, maxOperands: -1, interspersed: true,
	},
	{
		programs: []string{"pwd"}, style: getopt,
		operands: noOperands,
	},
	{
		programs: []string{"which"}, style: getopt,
		operands: bareWords, minOperands: 1, maxOperands: 1,
	},
}

// byProgram indexes table by program name.
var byProgram = func() map[string][]*row {
	m := map[string][]*row{}
	for i := range table {
		r := &table[i]
		for _, p := range r.programs {
			m[p] = append(m[p], r)
		}
	}
	return m
}()

// installs is the lockfile-install allowance of §5: "npm ci, a bare npm install, pnpm
// install [--frozen-lockfile], yarn [install] [--immutable], bun install — with no package
// named and no flag beyond the frozen/offline/no-scripts ones". Allowed when one of the
// lockfiles is in the command's directory.
var installs = map[string]install{
	"npm": {
		subs:      []string{"ci", "install"},
		flags:     []string{"--offline", "--ignore-scripts"},
		lockfiles: []string{"package-lock.json", "npm-shrinkwrap.json"},
	},
	"pnpm": {
		subs:      []string{"install"},
		flags:     []string{"--frozen-lockfile", "--offline", "--ignore-scripts"},
		lockfiles: []string{"pnpm-lock.yaml"},
	},
	"yarn": {
		subs:      []string{"install"},
		bare:      true,
		flags:     []string{"--immutable", "--frozen-lockfile", "--offline", "--ignore-scripts"},
		lockfiles: []string{"yarn.lock"},
	},
	"bun": {
		subs:      []string{"install"},
		flags:     []string{"--frozen-lockfile", "--ignore-scripts"},
		lockfiles: []string{"bun.lock", "bun.lockb"},
	},
}

// install is one package manager's lockfile-install allowance.
type install struct {
	// subs are the subcommands that install.
	subs []string
	// bare says the program with no subcommand installs too (yarn).
	bare bool
	// flags are the frozen, offline and no-scripts flags; any other flag is a card.
	flags []string
	// lockfiles are the files, any one of which admits the install.
	lockfiles []string
}

// installers name the card of a command that installs, the one job §5 leaves "the old
// parser": "putting a name on that card (“npm install installs packages this machine did
// not have”) rather than “npm install is not on the run list”". Keys are program and
// subcommand. They never admit anything.
var installers = map[string]bool{
	"npm install": true, "npm i": true, "npm add": true, "npm update": true,
	"pnpm add": true, "pnpm update": true, "yarn add": true, "yarn up": true, "bun add": true,
	"pip install": true, "pip3 install": true, "pipx install": true, "uv add": true, "uv pip": true,
	"cargo install": true, "cargo add": true, "go get": true, "go install": true,
	"gem install": true, "brew install": true, "apt install": true, "apt-get install": true,
}
