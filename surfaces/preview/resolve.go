package preview

import (
	"context"

	"buddi/supervisor/proc"
)

// Processes is what a preview asks of the process host (supervisor.ProcessHost): the
// supervised process of a name, as its actor last reported it, from memory.
type Processes interface {
	// Lookup returns the process named name, and whether one is supervised.
	Lookup(name string) (proc.Status, bool)
}

// HostResolver resolves the previews of plugin's processes from the process host's record,
// which the process actors keep current as their processes start, crash, stop and exit: no
// database on a request. A process that is not running now (waiting to be started again
// after a crash) or said no port has no preview. The target is then checked as always (the
// port, and the process's own listening socket).
func HostResolver(plugin string, host Processes) Resolver {
	return func(_ context.Context, p, name string) (Target, error) {
		if p != plugin {
			return Target{}, ErrUnknown
		}
		s, ok := host.Lookup(name)
		if !ok || s.State != proc.StateRunning || s.Pid <= 0 || s.Port <= 0 {
			return Target{}, ErrUnknown
		}
		return Target{Port: s.Port, Pid: s.Pid}, nil
	}
}
