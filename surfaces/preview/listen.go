// Package preview serves developer previews through buddi (seed 000 §12, "Through buddi"):
// a second listener of its own, never the dashboard's origin, that proxies
// /preview/<plugin>/<name>/… to the loopback port of a process an agent started. The way in is
// a single-use five-minute ticket from the dashboard's link route, exchanged for a cookie
// scoped to that one preview; every other request without it gets a bodyless 401. The port is
// resolved on every request and must be one the process itself listens on (its listening
// socket's inode among its descriptors, on Linux); privileged ports, Postgres's and buddi's
// own are refused. Websockets are proxied, so hot reload works.
package preview

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// Listen binds the preview listener: port on host, or the next free one after it (up to 20
// steps), since the guess "dashboard port + 1" may be taken.
func Listen(host string, port int) (net.Listener, error) {
	var last error
	for p := port; p < port+20 && p <= 65535; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("listen for previews on %s:%d: %w (BUDDI_PREVIEW_PORT chooses the port)", host, p, err)
		}
		last = err
	}
	return nil, fmt.Errorf("no free port for previews from %d to %d: %w (set BUDDI_PREVIEW_PORT)", port, port+19, last)
}
