package testmetric

import (
	"strings"
	"testing"
)

func TestRunner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command string
		want    string // "" for not a runner
	}{
		{"vitest", Vitest},
		{"vitest run", Vitest},
		{"vitest run -t adds src/sum.test.ts", Vitest},
		{"vitest src/sum", Vitest},
		{"vitest bench", ""},
		{"vitest list", ""},
		{"vitest --version", ""},
		{"jest", Jest},
		{"jest -t adds src", Jest},
		{"jest --listTests", ""},
		{"pytest", Pytest},
		{"pytest -q -x tests", Pytest},
		{"py.test", Pytest},
		{"pytest --collect-only", ""},
		{"pytest --co -q", ""},
		{"python -m pytest", Pytest},
		{"python3 -m pytest -k 'a and b' tests", Pytest},
		{"python3.12 -m pytest", Pytest},
		{"python3 -mpytest", Pytest},
		{"python3 -u -m pytest", Pytest},
		{"python3 -m pytest --collect-only", ""},
		{"python -m unittest", Unittest},
		{"python3 -m unittest discover -s tests", Unittest},
		{"python3 -m mypy src", ""},
		{"python3 -c 'import pytest'", ""},
		{"python3 scripts/test.py", ""},
		{"python3 scripts/x.py -m pytest", ""},
		{"python", ""},
		{"go test ./...", GoTest},
		{"go test -v -run TestAdd ./calc", GoTest},
		{"go test -c ./calc", ""},
		{"go test -list . ./calc", ""},
		{"go test -list=. ./calc", ""},
		{"go build ./...", ""},
		{"go vet ./...", ""},
		{"go", ""},
		{"cargo test", CargoTest},
		{"cargo test --release", CargoTest},
		{"cargo +nightly test", CargoTest},
		{"cargo test -- --nocapture", CargoTest},
		{"cargo test --no-run", ""},
		{"cargo build", ""},
		{"cargo clippy", ""},
		{"npm test", NpmTest},
		{"npm run test", NpmTest},
		{"npm test -- --watch=false", NpmTest},
		{"npm run build", ""},
		{"npm run typecheck", ""},
		{"npm install", ""},
		{"pnpm test", PnpmTest},
		{"pnpm run test", PnpmTest},
		{"yarn test", YarnTest},
		{"bun test", BunTest},
		{"bun run test", BunTest},
		{"bun run lint", ""},
		{"node --test", NodeTest},
		{"node --test test/", NodeTest},
		{"node --experimental-vm-modules --test", NodeTest},
		{"node test.js --test", ""},
		{"node -e 1", ""},
		{"make test", MakeTest},
		{"make lint test", MakeTest},
		{"make -k test", MakeTest},
		{"make -j4 test", MakeTest},
		{"make -C test", ""},
		{"make -n test", ""},
		{"make -kn test", ""},
		{"make --dry-run test", ""},
		{"make build", ""},
		{"make", ""},
		{"tsc --noEmit", ""},
		{"eslint src", ""},
		{"npx vitest run", ""},
		{"npx jest", ""},
		{"/usr/bin/pytest", ""},
		{"./node_modules/.bin/vitest", ""},
		{"unittest", ""},
		{"true", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := Runner(strings.Fields(strings.ReplaceAll(tt.command, "'a and b'", "a_and_b")))
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("Runner(%q) = %q, %v; want %q", tt.command, got, ok, tt.want)
		}
	}
}
