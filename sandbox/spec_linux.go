package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
)

// launchEnv is the one variable of a launcher's environment: the launch, as JSON. Its
// presence is what makes a process a launcher (see the package's init).
const launchEnv = "BUDDI_SANDBOX_LAUNCH"

// launcherName is the launcher's argv[0], as ps shows it until the exec.
const launcherName = "buddi-sandbox-launcher"

// maxLaunch bounds the encoded launch: one environment string is at most 128 KiB.
const maxLaunch = 120 << 10

// launch is what a launcher is told: the policy, the program and how to run it.
type launch struct {
	Policy Policy   `json:"policy"`
	Path   string   `json:"path"` // absolute program file
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	// Status is the launcher's descriptor for its one failure line; 0 means stderr.
	Status int `json:"status"`
	// Git lists the places git would take for a repository found in the workspace (its own
	// .git apart) when the launch was made: each is mounted read-only in the box.
	Git []gitEntry `json:"git,omitempty"`
	// Probe applies the box and exits 0 without an exec (Check).
	Probe bool `json:"probe,omitempty"`
	// FailAt makes the launcher fail at that stage, for tests of the refusal path. Only this
	// package's tests set it.
	FailAt string `json:"fail_at,omitempty"`
}

// encode returns the launch as the value of launchEnv.
func (l launch) encode() (string, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return "", fmt.Errorf("sandbox: encode the launch: %w", err)
	}
	if len(b) > maxLaunch {
		return "", fmt.Errorf("sandbox: the command and its environment take %d bytes, more than the %d the launcher can be given: shorten the command", len(b), maxLaunch)
	}
	return string(b), nil
}

// decodeLaunch parses launchEnv's value.
func decodeLaunch(s string) (launch, error) {
	var l launch
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return launch{}, fmt.Errorf("decode the launch: %w", err)
	}
	return l, nil
}
