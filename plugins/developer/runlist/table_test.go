package runlist

import (
	"slices"
	"strings"
	"testing"
)

// rowTable is the cases for one run-list row of §5: its allowed spellings, and each flag
// or operand that is not auto.
type rowTable struct {
	row   string
	cases []decisionCase
}

// A, G and R keep the tables narrow.
const (
	A = Auto
	G = Gated
	R = Refused
)

var rowTables = []rowTable{
	{"node", []decisionCase{
		{"node index.js", A, RuleRunList, ""},
		{"node --test", A, RuleRunList, ""},
		{"node --test test/a.test.js", A, RuleRunList, ""},
		{"node scripts/build.js extra.txt", A, RuleRunList, ""},
		{"node", G, RuleOperand, ""},
		{"node -e 1", G, RuleUnknownFlag, "-e"},
		{"node -p 1", G, RuleUnknownFlag, "-p"},
		{"node --import=data:text/javascript,1 a.js", G, RuleUnknownFlag, "--import"},
		{"node --require ./x.js a.js", G, RuleUnknownFlag, "--require"},
		{"node --test=x", G, RuleFlagValue, "--test"},
		{"node /tmp/x.js", G, RulePathAbsolute, ""},
		{"node ../x.js", G, RulePathClimbs, ""},
		{"node a.js --inspect", G, RuleDashOperand, ""},
		{"node a.js -- x", G, RuleDashOperand, ""},
		{"node -- -x.js", G, RuleDashOperand, ""},
	}},
	{"npm pnpm yarn bun", []decisionCase{
		{"npm test", A, RuleRunList, ""},
		{"npm run", A, RuleRunList, ""},
		{"npm run build", A, RuleRunList, ""},
		{"npm run test:unit", A, RuleRunList, ""},
		{"npm run -- build", A, RuleRunList, ""},
		{"pnpm lint", A, RuleRunList, ""},
		{"pnpm run typecheck", A, RuleRunList, ""},
		{"yarn build", A, RuleRunList, ""},
		{"yarn test", A, RuleRunList, ""},
		{"bun run build", A, RuleRunList, ""},
		{"bun test", A, RuleRunList, ""},
		{"npm", G, RuleSubcommand, ""},
		{"npm start", G, RuleSubcommand, ""},
		{"npm exec vite", G, RuleSubcommand, ""},
		{"pnpm dlx cowsay", G, RuleSubcommand, ""},
		{"yarn dlx cowsay", G, RuleSubcommand, ""},
		{"npm run build --silent", G, RuleUnknownFlag, "--silent"},
		{"npm run build -w x", G, RuleUnknownFlag, "-w"},
		{"npm --prefix / run build", G, RuleSubcommand, ""},
		{"npm test -- --coverage", G, RuleDashOperand, ""},
		{"npm run Build", G, RuleOperand, ""},
		{"npm run a b", G, RuleOperand, ""},
		{"npm run x/y", G, RuleOperand, ""},
		{"bun build ..", G, RuleOperand, ""},
		{"npm install lodash", G, RuleInstallPackage, ""},
	}},
	{"python python3", []decisionCase{
		{"python -m pytest", A, RuleRunList, ""},
		{"python3 -m pytest -q tests", A, RuleRunList, ""},
		{"python3 -mpytest -x", A, RuleRunList, ""},
		{"python -m unittest tests.test_x", A, RuleRunList, ""},
		{"python3 -m mypy src", A, RuleRunList, ""},
		{"python -m ruff check .", A, RuleRunList, ""},
		{"python -m black --check .", A, RuleRunList, ""},
		{"python3 scripts/build.py", A, RuleRunList, ""},
		{"python", G, RuleOperand, ""},
		{"python -c x", G, RuleUnknownFlag, "-c"},
		{"python -I -m pytest", G, RuleUnknownFlag, "-I"},
		{"python -Im pytest", G, RuleUnknownFlag, "-I"},
		{"python -m http.server", G, RuleFlagValue, "-m"},
		{"python -m pip install x", G, RuleFlagValue, "-m"},
		{"python -m=pytest", G, RuleFlagValue, "-m"},
		{"python3 -m", G, RuleMissingValue, "-m"},
		{"python -m pytest --pdb", G, RuleUnknownFlag, "--pdb"},
		{"python -m unittest -v", G, RuleUnknownFlag, "-v"},
		{"python -m ruff server", G, RuleSubcommand, ""},
		{"python3 scripts/build.py --release", G, RuleOperand, ""},
		{"python3 scripts/build.py x", G, RuleOperand, ""},
		{"python3 /tmp/x.py", G, RulePathAbsolute, ""},
		{"python3 ../x.py", G, RulePathClimbs, ""},
	}},
	{"pytest", []decisionCase{
		{"pytest", A, RuleRunList, ""},
		{"pytest -q", A, RuleRunList, ""},
		{"pytest -x -v tests", A, RuleRunList, ""},
		{"pytest -qxv", A, RuleRunList, ""},
		{"pytest -k 'test_a and not b'", A, RuleRunList, ""},
		{"pytest -ktest_a", A, RuleRunList, ""},
		{"pytest -k=test_a", A, RuleRunList, ""},
		{"pytest -qk test_a", A, RuleRunList, ""},
		{"pytest --maxfail=2", A, RuleRunList, ""},
		{"pytest --maxfail 2", A, RuleRunList, ""},
		{"pytest -p no:cacheprovider", A, RuleRunList, ""},
		{"pytest tests/test_x.py::test_y", A, RuleRunList, ""},
		{"pytest tests -q", A, RuleRunList, ""},
		{"pytest --maxfail=x", G, RuleFlagValue, "--maxfail"},
		{"pytest --maxfail", G, RuleMissingValue, "--maxfail"},
		{"pytest -k a/b", G, RuleFlagValue, "-k"},
		{"pytest -k", G, RuleMissingValue, "-k"},
		{"pytest -k --co", G, RuleFlagValue, "-k"},
		{"pytest -p ../evil", G, RuleFlagValue, "-p"},
		{"pytest --rootdir=/", G, RuleUnknownFlag, "--rootdir"},
		{"pytest -c /etc/x.ini", G, RuleUnknownFlag, "-c"},
		{"pytest --co", G, RuleUnknownFlag, "--co"},
		{"pytest -qs", G, RuleUnknownFlag, "-s"},
		{"pytest -x=1", G, RuleFlagValue, "-x"},
		{"pytest --pyargs os", G, RuleUnknownFlag, "--pyargs"},
		{"pytest /etc", G, RulePathAbsolute, ""},
		{"pytest ../tests", G, RulePathClimbs, ""},
	}},
	{"unittest", []decisionCase{
		{"unittest", A, RuleRunList, ""},
		{"unittest tests.test_x tests.test_y", A, RuleRunList, ""},
		{"unittest -v", G, RuleUnknownFlag, "-v"},
		{"unittest tests/test_x.py", G, RuleOperand, ""},
	}},
	{"go", []decisionCase{
		{"go test ./...", A, RuleRunList, ""},
		{"go test -v ./...", A, RuleRunList, ""},
		{"go test --v ./...", A, RuleRunList, ""},
		{"go test -run TestX ./pkg/...", A, RuleRunList, ""},
		{"go test -run=TestX", A, RuleRunList, ""},
		{"go test --run=TestX ./...", A, RuleRunList, ""},
		{"go test ./... -run 'TestA.*'", A, RuleRunList, ""},
		{"go test pkg/... core", A, RuleRunList, ""},
		{"go test ...", A, RuleRunList, ""},
		{"go build", A, RuleRunList, ""},
		{"go build -v ./cmd/buddi", A, RuleRunList, ""},
		{"go vet ./...", A, RuleRunList, ""},
		{"go fmt ./...", A, RuleRunList, ""},
		{"go", G, RuleSubcommand, ""},
		{"go run .", G, RuleSubcommand, ""},
		{"go generate ./...", G, RuleSubcommand, ""},
		{"go env -w GOFLAGS=x", G, RuleSubcommand, ""},
		{"go test -count=1 ./...", G, RuleUnknownFlag, "-count"},
		{"go test -exec /tmp/x ./...", G, RuleUnknownFlag, "-exec"},
		{"go test -toolexec x ./...", G, RuleUnknownFlag, "-toolexec"},
		{"go build -o /tmp/x", G, RuleUnknownFlag, "-o"},
		{"go test -vrun x", G, RuleUnknownFlag, "-vrun"},
		{"go test -v=true", G, RuleFlagValue, "-v"},
		{"go test -run", G, RuleMissingValue, "-run"},
		{"go build ./... -v", G, RuleDashOperand, ""},
		{"go test ../...", G, RulePathClimbs, ""},
		{"go test /abs/...", G, RulePathAbsolute, ""},
		{"go vet ..", G, RulePathClimbs, ""},
	}},
	{"cargo", []decisionCase{
		{"cargo test", A, RuleRunList, ""},
		{"cargo build --release", A, RuleRunList, ""},
		{"cargo check -v", A, RuleRunList, ""},
		{"cargo clippy", A, RuleRunList, ""},
		{"cargo fmt", A, RuleRunList, ""},
		{"cargo test my_test", A, RuleRunList, ""},
		{"cargo test -run my_test", A, RuleRunList, ""},
		{"cargo", G, RuleSubcommand, ""},
		{"cargo run", G, RuleSubcommand, ""},
		{"cargo install ripgrep", G, RuleSubcommand, ""},
		{"cargo test --manifest-path x/Cargo.toml", G, RuleUnknownFlag, "--manifest-path"},
		{"cargo build --target-dir=/tmp", G, RuleUnknownFlag, "--target-dir"},
		{"cargo build -r", G, RuleUnknownFlag, "-r"},
		{"cargo test --release=yes", G, RuleFlagValue, "--release"},
		{"cargo test -- --nocapture", G, RuleDashOperand, ""},
		{"cargo test a/b", G, RuleOperand, ""},
	}},
	{"make", []decisionCase{
		{"make", A, RuleRunList, ""},
		{"make test", A, RuleRunList, ""},
		{"make build test", A, RuleRunList, ""},
		{"make test:unit lint.go_x-1", A, RuleRunList, ""},
		{"make -C /tmp", G, RuleUnknownFlag, "-C"},
		{"make -f other.mk", G, RuleUnknownFlag, "-f"},
		{"make -j4", G, RuleUnknownFlag, "-j"},
		{"make --eval=x", G, RuleUnknownFlag, "--eval"},
		{"make FOO=bar", G, RuleOperand, ""},
		{"make ../x", G, RuleOperand, ""},
	}},
	{"tsc", []decisionCase{
		{"tsc", A, RuleRunList, ""},
		{"tsc --noEmit", A, RuleRunList, ""},
		{"tsc -p .", A, RuleRunList, ""},
		{"tsc -p tsconfig.build.json --noEmit", A, RuleRunList, ""},
		{"tsc --project=tsconfig.json", A, RuleRunList, ""},
		{"tsc --p tsconfig.json", A, RuleRunList, ""},
		{"tsc src/a.ts", A, RuleRunList, ""},
		{"tsc -p /etc/x", G, RulePathAbsolute, "-p"},
		{"tsc --project ../x", G, RulePathClimbs, "--project"},
		{"tsc -p", G, RuleMissingValue, "-p"},
		{"tsc --outDir /tmp", G, RuleUnknownFlag, "--outDir"},
		{"tsc --noEmit=false", G, RuleFlagValue, "--noEmit"},
		{"tsc --noemit", G, RuleUnknownFlag, "--noemit"},
		{"tsc -w", G, RuleUnknownFlag, "-w"},
		{"tsc -pfoo", G, RuleUnknownFlag, "-pfoo"},
	}},
	{"vitest jest", []decisionCase{
		{"vitest", A, RuleRunList, ""},
		{"vitest run", A, RuleRunList, ""},
		{"vitest run src", A, RuleRunList, ""},
		{"vitest -t name", A, RuleRunList, ""},
		{"vitest run -t=name", A, RuleRunList, ""},
		{"jest", A, RuleRunList, ""},
		{"jest -t 'adds numbers' tests", A, RuleRunList, ""},
		{"vitest -tfoo", G, RuleFlagValue, "-t"},
		{"vitest -t -foo", G, RuleFlagValue, "-t"},
		{"vitest -t a/b", G, RuleFlagValue, "-t"},
		{"vitest init browser", G, RuleSubcommand, ""},
		{"vitest bench", G, RuleSubcommand, ""},
		{"vitest --config=/tmp/x.ts", G, RuleUnknownFlag, "--config"},
		{"vitest run --root ..", G, RuleUnknownFlag, "--root"},
		{"jest --rootDir=/", G, RuleUnknownFlag, "--rootDir"},
		{"jest -c x.js", G, RuleUnknownFlag, "-c"},
		{"jest ../other", G, RulePathClimbs, ""},
	}},
	{"eslint", []decisionCase{
		{"eslint", A, RuleRunList, ""},
		{"eslint .", A, RuleRunList, ""},
		{"eslint --fix src", A, RuleRunList, ""},
		{"eslint src --fix", A, RuleRunList, ""},
		{"eslint -c /tmp/x.js .", G, RuleUnknownFlag, "-c"},
		{"eslint --rulesdir=/tmp .", G, RuleUnknownFlag, "--rulesdir"},
		{"eslint --fix=true", G, RuleFlagValue, "--fix"},
		{"eslint /etc", G, RulePathAbsolute, ""},
	}},
	{"prettier", []decisionCase{
		{"prettier --check .", A, RuleRunList, ""},
		{"prettier --write src", A, RuleRunList, ""},
		{"prettier --config /x .", G, RuleUnknownFlag, "--config"},
		{"prettier -w .", G, RuleUnknownFlag, "-w"},
		{"prettier --plugin=x .", G, RuleUnknownFlag, "--plugin"},
		{"prettier --write ../other", G, RulePathClimbs, ""},
	}},
	{"ruff", []decisionCase{
		{"ruff check .", A, RuleRunList, ""},
		{"ruff check --fix", A, RuleRunList, ""},
		{"ruff format --check src", A, RuleRunList, ""},
		{"ruff format", A, RuleRunList, ""},
		{"ruff .", A, RuleRunList, ""},
		{"ruff clean", G, RuleSubcommand, ""},
		{"ruff server", G, RuleSubcommand, ""},
		{"ruff check --config=/tmp/x.toml", G, RuleUnknownFlag, "--config"},
		{"ruff check --unsafe-fixes", G, RuleUnknownFlag, "--unsafe-fixes"},
		{"ruff check /", G, RulePathAbsolute, ""},
	}},
	{"black mypy", []decisionCase{
		{"black --check .", A, RuleRunList, ""},
		{"black src", A, RuleRunList, ""},
		{"mypy src", A, RuleRunList, ""},
		{"mypy --check", A, RuleRunList, ""},
		{"mypy --config-file=/x", G, RuleUnknownFlag, "--config-file"},
		{"black -l 100 .", G, RuleUnknownFlag, "-l"},
		{"mypy ../x", G, RulePathClimbs, ""},
	}},
	{"ls", []decisionCase{
		{"ls", A, RuleRunList, ""},
		{"ls -la", A, RuleRunList, ""},
		{"ls -al src", A, RuleRunList, ""},
		{"ls -a -l src app", A, RuleRunList, ""},
		{"ls src -l", A, RuleRunList, ""},
		{"ls -R", G, RuleUnknownFlag, "-R"},
		{"ls -laR", G, RuleUnknownFlag, "-R"},
		{"ls --color=always", G, RuleUnknownFlag, "--color"},
		{"ls -l=x", G, RuleFlagValue, "-l"},
		{"ls /", G, RulePathAbsolute, ""},
		{"ls ..", G, RulePathClimbs, ""},
		{"ls src/../..", G, RulePathClimbs, ""},
	}},
	{"cat", []decisionCase{
		{"cat README.md", A, RuleRunList, ""},
		{"cat a b", A, RuleRunList, ""},
		{"cat '*.md'", A, RuleRunList, ""},
		{"cat", A, RuleRunList, ""},
		{"cat -v x", G, RuleUnknownFlag, "-v"},
		{"cat /etc/passwd", G, RulePathAbsolute, ""},
		{"cat ../secret", G, RulePathClimbs, ""},
		{"cat -- -x", G, RuleDashOperand, ""},
		{"cat -", G, RuleDashOperand, ""},
	}},
	{"head tail", []decisionCase{
		{"head x", A, RuleRunList, ""},
		{"head -n 5 x", A, RuleRunList, ""},
		{"head -n5 x", A, RuleRunList, ""},
		{"tail -c 100 x", A, RuleRunList, ""},
		{"tail -n 20 -c 3 x", A, RuleRunList, ""},
		{"tail x -n 3", A, RuleRunList, ""},
		{"tail -f x", G, RuleUnknownFlag, "-f"},
		{"tail -F x", G, RuleUnknownFlag, "-F"},
		{"head -5 x", G, RuleUnknownFlag, "-5"},
		{"head -n x5 x", G, RuleFlagValue, "-n"},
		{"head -n -5 x", G, RuleFlagValue, "-n"},
		{"head -n=5 x", G, RuleFlagValue, "-n"},
		{"tail -n +5 x", G, RuleFlagValue, "-n"},
		{"head -n", G, RuleMissingValue, "-n"},
		{"head --lines=5 x", G, RuleUnknownFlag, "--lines"},
		{"head /etc/shadow", G, RulePathAbsolute, ""},
	}},
	{"wc", []decisionCase{
		{"wc x", A, RuleRunList, ""},
		{"wc -l x", A, RuleRunList, ""},
		{"wc -lcw x y", A, RuleRunList, ""},
		{"wc --files0-from=x", G, RuleUnknownFlag, "--files0-from"},
		{"wc -m x", G, RuleUnknownFlag, "-m"},
		{"wc -l ../x", G, RulePathClimbs, ""},
	}},
	{"grep", []decisionCase{
		{"grep -rn foo src", A, RuleRunList, ""},
		{"grep -n foo a.go", A, RuleRunList, ""},
		{"grep -rnw foo .", A, RuleRunList, ""},
		{"grep -E 'a.*b' src/x", A, RuleRunList, ""},
		{"grep -F -i -c -l foo x", A, RuleRunList, ""},
		{"grep --include='*.go' -rn foo .", A, RuleRunList, ""},
		{"grep --include '*.go' -r foo", A, RuleRunList, ""},
		{"grep '--include=src/*.go' -r foo", A, RuleRunList, ""},
		{"grep -rn '#include' src", A, RuleRunList, ""},
		{"grep -rn /etc/passwd src", A, RuleRunList, ""},
		{"grep -f /etc/passwd", G, RuleUnknownFlag, "-f"},
		{"grep -R foo .", G, RuleUnknownFlag, "-R"},
		{"grep -rf x .", G, RuleUnknownFlag, "-f"},
		{"grep -e foo x", G, RuleUnknownFlag, "-e"},
		{"grep --exclude-from=x foo", G, RuleUnknownFlag, "--exclude-from"},
		{"grep '--inc=*.go' foo", G, RuleUnknownFlag, "--inc"},
		{"grep '--include=/etc/*' -r foo", G, RuleFlagValue, "--include"},
		{"grep '--include=../*' -r foo", G, RuleFlagValue, "--include"},
		{"grep --include", G, RuleMissingValue, "--include"},
		{"grep foo /etc/passwd", G, RulePathAbsolute, ""},
		{"grep -r foo ../", G, RulePathClimbs, ""},
		{"grep -- -foo x", G, RuleDashOperand, ""},
	}},
	{"rg", []decisionCase{
		{"rg foo", A, RuleRunList, ""},
		{"rg -n foo src", A, RuleRunList, ""},
		{"rg -g '*.go' foo", A, RuleRunList, ""},
		{"rg '-g=*.go' foo", A, RuleRunList, ""},
		{"rg '-g*.go' foo", A, RuleRunList, ""},
		{"rg -g '!vendor/**' foo", A, RuleRunList, ""},
		{"rg -t go foo", A, RuleRunList, ""},
		{"rg -tgo foo", A, RuleRunList, ""},
		{"rg --no-follow -i foo", A, RuleRunList, ""},
		{"rg -nilwc foo", A, RuleRunList, ""},
		{"rg -L foo", G, RuleUnknownFlag, "-L"},
		{"rg -nL foo", G, RuleUnknownFlag, "-L"},
		{"rg --follow foo", G, RuleUnknownFlag, "--follow"},
		{"rg --pre cat foo", G, RuleUnknownFlag, "--pre"},
		{"rg -uuu foo", G, RuleUnknownFlag, "-u"},
		{"rg --no-config foo", G, RuleUnknownFlag, "--no-config"},
		{"rg -g '/etc/*' foo", G, RuleFlagValue, "-g"},
		{"rg -g 'src/../../*' foo", G, RuleFlagValue, "-g"},
		{"rg -t go/x foo", G, RuleFlagValue, "-t"},
		{"rg --no-follow=yes foo", G, RuleFlagValue, "--no-follow"},
		{"rg foo /", G, RulePathAbsolute, ""},
	}},
	{"find", []decisionCase{
		{"find", A, RuleRunList, ""},
		{"find .", A, RuleRunList, ""},
		{"find src -name '*.go'", A, RuleRunList, ""},
		{"find -name x", A, RuleRunList, ""},
		{"find . -type f -name '*.ts' -not -path './node_modules/*'", A, RuleRunList, ""},
		{"find . -maxdepth 2 -mindepth 1 -type d", A, RuleRunList, ""},
		{"find . -newer go.mod", A, RuleRunList, ""},
		{"find . -size -10k", A, RuleRunList, ""},
		{"find . -name a -o -name b", A, RuleRunList, ""},
		{"find . -iname '*.MD' -a -type f", A, RuleRunList, ""},
		{"find -L .", G, RuleUnknownFlag, "-L"},
		{"find . -files0-from x", G, RuleUnknownFlag, "-files0-from"},
		{"find -files0-from x", G, RuleUnknownFlag, "-files0-from"},
		{"find . -delete", G, RuleUnknownFlag, "-delete"},
		{"find . -fprint out", G, RuleUnknownFlag, "-fprint"},
		{"find . -execdir x", G, RuleUnknownFlag, "-execdir"},
		{"find . '!' -name x", G, RuleUnknownFlag, "!"},
		{"find --name x", G, RuleUnknownFlag, "--name"},
		{"find . -name=x", G, RuleUnknownFlag, "-name"},
		{"find / -name x", G, RulePathAbsolute, ""},
		{"find .. -name x", G, RulePathClimbs, ""},
		{"find . -newer /etc/passwd", G, RulePathAbsolute, "-newer"},
		{"find . -newer ../x", G, RulePathClimbs, "-newer"},
		{"find . -name /x", G, RuleFlagValue, "-name"},
		{"find . -path '../*'", G, RuleFlagValue, "-path"},
		{"find . -maxdepth x", G, RuleFlagValue, "-maxdepth"},
		{"find . -type d/x", G, RuleFlagValue, "-type"},
		{"find . -name", G, RuleMissingValue, "-name"},
		{"find a b", G, RuleOperand, ""},
		{"find . name x", G, RuleOperand, ""},
		{"find - -name x", G, RuleDashOperand, ""},
	}},
	{"diff", []decisionCase{
		{"diff a b", A, RuleRunList, ""},
		{"diff -u a b", A, RuleRunList, ""},
		{"diff -ru a b", A, RuleRunList, ""},
		{"diff -u /etc/passwd a", G, RulePathAbsolute, ""},
		{"diff --to-file=x a", G, RuleUnknownFlag, "--to-file"},
		{"diff -N a b", G, RuleUnknownFlag, "-N"},
	}},
	{"sort", []decisionCase{
		{"sort x", A, RuleRunList, ""},
		{"sort -nru x", A, RuleRunList, ""},
		{"sort -o /tmp/out x", G, RuleUnknownFlag, "-o"},
		{"sort -no/tmp/out x", G, RuleUnknownFlag, "-o"},
		{"sort --files0-from=x", G, RuleUnknownFlag, "--files0-from"},
		{"sort --compress-program=sh x", G, RuleUnknownFlag, "--compress-program"},
		{"sort -T /tmp x", G, RuleUnknownFlag, "-T"},
		{"sort -k2 x", G, RuleUnknownFlag, "-k"},
	}},
	{"uniq", []decisionCase{
		{"uniq -c x", A, RuleRunList, ""},
		{"uniq x", A, RuleRunList, ""},
		{"uniq x y", G, RuleOperand, ""}, // y is the file uniq writes
		{"uniq -d x", G, RuleUnknownFlag, "-d"},
		{"uniq x .git/info/attributes", G, RuleOperand, ""},
		{"uniq /tmp/out", G, RulePathAbsolute, ""},
	}},
	{"echo", []decisionCase{
		{"echo hello world", A, RuleRunList, ""},
		{"echo 'a b' c", A, RuleRunList, ""},
		{"echo /etc/passwd ..", A, RuleRunList, ""},
		{"echo", A, RuleRunList, ""},
		{"echo -n x", G, RuleUnknownFlag, "-n"},
		{"echo -- -n", G, RuleDashOperand, ""},
	}},
	{"pwd", []decisionCase{
		{"pwd", A, RuleRunList, ""},
		{"pwd -P", G, RuleUnknownFlag, "-P"},
		{"pwd x", G, RuleOperand, ""},
	}},
	{"which", []decisionCase{
		{"which go", A, RuleRunList, ""},
		{"which", G, RuleOperand, ""},
		{"which -a go", G, RuleUnknownFlag, "-a"},
		{"which go node", G, RuleOperand, ""},
		{"which ./x", G, RuleOperand, ""},
	}},
}

func TestRunListRows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, rt := range rowTables {
		t.Run(rt.row, func(t *testing.T) {
			t.Parallel()
			for _, c := range rt.cases {
				check(t, b.in(c.cmd), c)
			}
		})
	}
}

// TestTableIsTheSeedsList keeps the table's programs exactly §5's, and every row covered
// by a rowTable.
func TestTableIsTheSeedsList(t *testing.T) {
	t.Parallel()
	seed := []string{
		"node", "npm", "pnpm", "yarn", "bun", "python", "python3", "pytest", "unittest", "go",
		"cargo", "make", "tsc", "vitest", "jest", "eslint", "prettier", "ruff", "black", "mypy",
		"ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "diff", "sort", "uniq", "echo",
		"pwd", "which",
	}
	var got []string
	for p := range byProgram {
		got = append(got, p)
	}
	slices.Sort(got)
	slices.Sort(seed)
	if !slices.Equal(got, seed) {
		t.Errorf("got programs %q, want %q", got, seed)
	}
	covered := map[string]bool{}
	for _, rt := range rowTables {
		for _, p := range strings.Fields(rt.row) {
			covered[p] = true
		}
	}
	for _, p := range seed {
		if !covered[p] {
			t.Errorf("no row table covers %s", p)
		}
	}
	for _, r := range table {
		for _, f := range r.flags {
			if !strings.HasPrefix(f.name, "-") || f.name == "-" || f.name == "--" {
				t.Errorf("%v: flag %q is not spelled as a flag", r.programs, f.name)
			}
		}
		if r.maxOperands >= 0 && r.minOperands > r.maxOperands {
			t.Errorf("%v: min %d > max %d", r.programs, r.minOperands, r.maxOperands)
		}
	}
}
