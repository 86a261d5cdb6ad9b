package host

import (
	"os"
	"os/user"

	"buddi/plugins"
)

// Name is the plugin's name; its tool is host.exec.
const Name = "host"

// Version is the plugin's version. It is part of every action's hash and scopes every
// standing permission for host.exec: raising it voids them all, so the owner is asked again.
const Version = "1.0.0"

// defaultPath is the PATH a script gets when buddi's own has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// Deps is what the plugin runs scripts with. A zero field takes its value from buddi's own
// process when the manifest is built (PATH, the user's home directory, LANG).
type Deps struct {
	// Path is the script's PATH, also where bash and python3 are looked up.
	Path string
	// Home is the script's HOME and its working directory when a call names none.
	Home string
	// Lang is the script's LANG; C.UTF-8 when buddi has none.
	Lang string
	// User names the host user scripts run as, for the card; the current user by default.
	User string
}

// withDefaults fills the zero fields of d from buddi's own process.
func (d Deps) withDefaults() Deps {
	if d.Path == "" {
		d.Path = os.Getenv("PATH")
	}
	if d.Path == "" {
		d.Path = defaultPath
	}
	if d.Home == "" {
		d.Home, _ = os.UserHomeDir()
	}
	if d.Home == "" {
		d.Home = "/"
	}
	if d.Lang == "" {
		d.Lang = os.Getenv("LANG")
	}
	if d.Lang == "" {
		d.Lang = "C.UTF-8"
	}
	if d.User == "" {
		if u, err := user.Current(); err == nil {
			d.User = u.Username
		}
	}
	if d.User == "" {
		d.User = "the user buddi runs as"
	}
	return d
}

// env is a script's whole environment: PATH, HOME and LANG, nothing of buddi's.
func (d Deps) env() []string {
	return []string{"PATH=" + d.Path, "HOME=" + d.Home, "LANG=" + d.Lang}
}

// Manifest is the host plugin: the single tool host.exec, run with deps.
func Manifest(deps Deps) plugins.Manifest {
	return plugins.Manifest{
		Name:        Name,
		Version:     Version,
		Description: "Runs Bash and Python scripts on the host, as the owner's user, each one approved or covered by a standing permission.",
		Tools:       []plugins.Tool{&execTool{deps: deps.withDefaults()}},
	}
}
