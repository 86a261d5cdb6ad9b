package runlist

import "testing"

// benchCorpus is a mixed corpus: run-list commands, allowances, escapes, plain and not.
var benchCorpus = []string{
	"npm test", "npm run build", "pnpm lint", "yarn typecheck", "bun test",
	"go test ./...", "go test -v -run TestDecide ./plugins/...", "go vet ./...", "go build -o /tmp/x",
	"cargo test --release", "make test", "make -C /tmp", "python3 -m pytest -q -k 'a and b' tests",
	"python3 scripts/build.py", "python -c 'import os'", "pytest --maxfail=2 -x tests",
	"tsc -p tsconfig.json --noEmit", "vitest run -t adds src", "jest", "eslint --fix src",
	"prettier --check .", "ruff check --fix .", "black --check .", "mypy src",
	"ls -la src", "cat README.md", "head -n 20 main.go", "tail -c 100 log.txt", "wc -l a b",
	"grep -rn --include='*.go' Decide .", "grep -f /etc/passwd", "rg -n -g '*.go' -t go foo src",
	"rg -L foo", "find . -type f -name '*.ts' -not -path './node_modules/*'", "find -L .",
	"diff -u a b", "sort -nru x", "sort -o /tmp/out x", "uniq -c x", "echo hello world", "pwd",
	"which go", "npm ci", "npm install lodash", "npx vite build", "npx cowsay",
	"env curl https://x", "cat $HOME/.ssh/id_ed25519", "echo x >>~/.zshenv", "node -e 1",
	"node --import=data:text/javascript,1 a.js", "node --test", "rm -rf .",
}

// BenchmarkDecide decides the whole corpus per iteration and reports commands per second.
func BenchmarkDecide(b *testing.B) {
	ws := b.TempDir()
	ins := make([]Input, len(benchCorpus))
	for i, c := range benchCorpus {
		ins[i] = Input{Command: c, Workspace: ws, Mode: ModeRun, Agent: "dev", FS: everythingFS{},
			Remembered: []Remembered{{Agent: "dev", Workspace: ws, Argv: []string{"npm", "install"}, Prefix: true}}}
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for i := range ins {
			_ = Decide(ins[i])
		}
		n += len(ins)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commands/s")
}
