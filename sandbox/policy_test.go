package sandbox

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := Policy{Home: "/home/o/.buddi", Workspace: "/home/o/src/app", Writable: []string{"/home/o/.npm"},
		ReadOnly: []string{"/home/o/src/app/.husky"}, Hidden: []string{"/home/o/.ssh", "/home/o/.npmrc"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a good policy: %v", err)
	}
	tests := []struct {
		name string
		edit func(p *Policy)
		want string
	}{
		{"no home", func(p *Policy) { p.Home = "" }, "no data directory"},
		{"no workspace", func(p *Policy) { p.Workspace = "" }, "no workspace"},
		{"relative home", func(p *Policy) { p.Home = ".buddi" }, "not an absolute path"},
		{"relative workspace", func(p *Policy) { p.Workspace = "src/app" }, "not an absolute path"},
		{"unclean workspace", func(p *Policy) { p.Workspace = "/home/o/src/../src/app" }, "not clean"},
		{"root workspace", func(p *Policy) { p.Workspace = "/" }, "root directory"},
		{"root home", func(p *Policy) { p.Home = "/" }, "root directory"},
		{"workspace is home", func(p *Policy) { p.Workspace = "/home/o/.buddi" }, "inside buddi's data directory"},
		{"workspace inside home", func(p *Policy) { p.Workspace = "/home/o/.buddi/developer" }, "inside buddi's data directory"},
		{"workspace holds home", func(p *Policy) { p.Workspace = "/home/o" }, "holds buddi's data directory"},
		{"cache inside home", func(p *Policy) { p.Writable = []string{"/home/o/.buddi/cache"} }, "inside buddi's data directory"},
		{"cache holds home", func(p *Policy) { p.Writable = []string{"/home"} }, "holds buddi's data directory"},
		{"read-only path inside home", func(p *Policy) { p.ReadOnly = []string{"/home/o/.buddi/vault.json"} }, "inside buddi's data directory"},
		{"shared /tmp as workspace", func(p *Policy) { p.Workspace = "/tmp" }, "shared system directory"},
		{"shared /run as cache", func(p *Policy) { p.Writable = []string{"/run"} }, "shared system directory"},
		{"/proc as cache", func(p *Policy) { p.Writable = []string{"/proc/self"} }, "system directory"},
		{"/dev as workspace", func(p *Policy) { p.Workspace = "/dev/shm/x" }, "system directory"},
		{"NUL", func(p *Policy) { p.Writable = []string{"/home/o/a\x00b"} }, "NUL"},
		{"relative hidden path", func(p *Policy) { p.Hidden = []string{".ssh"} }, "not an absolute path"},
		{"hidden system directory", func(p *Policy) { p.Hidden = []string{"/proc/1"} }, "system directory"},
		{"workspace holds a hidden path", func(p *Policy) { p.Hidden = []string{"/home/o/src/app/.env"} }, "holds the hidden path"},
		{"cache inside a hidden path", func(p *Policy) { p.Writable = []string{"/home/o/.ssh/x"} }, "inside the hidden path"},
		{"cache inside the workspace", func(p *Policy) { p.Writable = []string{"/home/o/src/app/.cache"} }, "writable already"},
		{"cache inside a cache", func(p *Policy) { p.Writable = []string{"/home/o/.cache", "/home/o/.cache/pip"} }, "writable already"},
		{"a cache twice", func(p *Policy) { p.Writable = []string{"/home/o/.npm", "/home/o/.npm"} }, "writable already"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			p.Writable = append([]string(nil), ok.Writable...)
			p.ReadOnly = append([]string(nil), ok.ReadOnly...)
			p.Hidden = append([]string(nil), ok.Hidden...)
			tt.edit(&p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    Policy
		want string
	}{
		{Policy{}, "sandboxed: writes only to the workspace (.git read-only), a private /tmp; no access to buddi's data or process; network open"},
		{Policy{GitWritable: true, Writable: []string{"/h/.npm"}},
			"sandboxed: writes only to the workspace, a private /tmp and /h/.npm; no access to buddi's data or process; network open"},
		{Policy{Writable: []string{"/a", "/b"}},
			"sandboxed: writes only to the workspace (.git read-only), a private /tmp, /a and /b; no access to buddi's data or process; network open"},
		{Policy{Writable: []string{"/a", "/b", "/c", "/d", "/e"}},
			"sandboxed: writes only to the workspace (.git read-only), a private /tmp, /a, /b, /c and 2 more; no access to buddi's data or process; network open"},
		{Policy{Hidden: []string{"~/.ssh"}},
			"sandboxed: writes only to the workspace (.git read-only), a private /tmp; no access to buddi's data or process, nor to ~/.ssh; network open"},
		{Policy{Hidden: []string{"~/.ssh", "~/.aws"}},
			"sandboxed: writes only to the workspace (.git read-only), a private /tmp; no access to buddi's data or process, nor to ~/.ssh and ~/.aws; network open"},
		{Policy{Hidden: []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.npmrc", "~/.netrc"}},
			"sandboxed: writes only to the workspace (.git read-only), a private /tmp; no access to buddi's data or process, nor to ~/.ssh, ~/.aws, ~/.gnupg and 2 more; network open"},
	}
	for _, tt := range tests {
		if got := tt.p.Describe(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
