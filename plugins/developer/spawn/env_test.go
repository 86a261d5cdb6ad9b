package spawn

import (
	"slices"
	"strings"
	"testing"
)

// poisoned is an environment full of what buddi's own may hold and no command may see.
var poisoned = []string{
	"DATABASE_URL=postgres://buddi:secret@localhost/buddi",
	"TEST_DATABASE_URL=postgres://x",
	"BUDDI_VAULT_KEY=k", "BUDDI_PREVIEW_PORT=8081", "BUDDI_DATA_DIR=/var/lib/buddi", "BUDDI_TOKEN=t",
	"ANTHROPIC_API_KEY=sk-ant-x", "OPENAI_API_KEY=sk-x", "TELEGRAM_BOT_TOKEN=1:abc",
	"GITHUB_TOKEN=ghp_x", "GH_TOKEN=ghp_y", "NPM_TOKEN=npm_x", "TS_AUTHKEY=tskey-x",
	"AWS_ACCESS_KEY_ID=AKIA", "AWS_SECRET_ACCESS_KEY=s", "AWS_SESSION_TOKEN=s", "AWS_PROFILE=p",
	"SSH_AUTH_SOCK=/tmp/ssh.sock", "GPG_AGENT_INFO=x", "LD_PRELOAD=/tmp/evil.so",
	"LD_LIBRARY_PATH=/tmp", "NODE_OPTIONS=--require /tmp/x.js", "PYTHONPATH=/tmp",
	"GIT_DIR=/tmp/g", "GOFLAGS=-x", "http_proxy=http://p", "SECRET=s", "PASSWORD=p",
	"TS_NO_LOGS_NO_SUPPORT=true", "PGPASSWORD=p", "PGHOST=/tmp",
}

// allowed is every name Env may produce.
var allowed = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL", "CI"}

func TestEnvKeepsNothingOfBuddis(t *testing.T) {
	t.Parallel()
	environ := append(slices.Clone(poisoned), "PATH=/usr/bin:/bin", "HOME=/home/o", "USER=o",
		"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TERM=xterm", "TMPDIR=/tmp", "SHELL=/bin/bash", "CI=false")
	env := Env(Capture(environ))
	var names []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
		if !slices.Contains(allowed, name) {
			t.Errorf("%s survived", kv)
		}
		for _, p := range poisoned {
			if kv == p {
				t.Errorf("%s survived", kv)
			}
		}
	}
	if !slices.Equal(names, allowed) {
		t.Errorf("got names %q, want %q", names, allowed)
	}
	if env[len(env)-1] != "CI=1" {
		t.Errorf("got %q last, want CI=1 whatever the owner's CI was", env[len(env)-1])
	}
}

func TestCapture(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		environ []string
		want    Owner
	}{
		{"nothing", nil, Owner{}},
		{"all", []string{"PATH=/a:/b", "HOME=/h", "USER=u", "LANG=l", "LC_ALL=c", "TERM=t", "TMPDIR=/t", "SHELL=/s"},
			Owner{Path: "/a:/b", Home: "/h", User: "u", Lang: "l", LCAll: "c", Term: "t", TmpDir: "/t", Shell: "/s"}},
		{"first wins, as getenv", []string{"HOME=/first", "HOME=/second"}, Owner{Home: "/first"}},
		{"value with =", []string{"LANG=a=b"}, Owner{Lang: "a=b"}},
		{"no = and other names ignored", []string{"PATH", "DATABASE_URL=x", "BUDDI_X=y", "path=/lower"}, Owner{}},
	}
	for _, tt := range tests {
		if got := Capture(tt.environ); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		owner Owner
		want  []string
	}{
		{"empty owner: CI only", Owner{}, []string{"CI=1"}},
		{"order and omission", Owner{Shell: "/bin/sh", Path: "/usr/bin", Home: "/h"}, []string{"PATH=/usr/bin", "HOME=/h", "SHELL=/bin/sh", "CI=1"}},
		{"relative PATH entries dropped", Owner{Path: ":.:bin:/usr/bin::./x:/bin:"}, []string{"PATH=/usr/bin:/bin", "CI=1"}},
		{"PATH of only relative entries", Owner{Path: ".:"}, []string{"CI=1"}},
		{"NUL dropped", Owner{Home: "/h\x00x", User: "u"}, []string{"USER=u", "CI=1"}},
	}
	for _, tt := range tests {
		if got := Env(tt.owner); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
