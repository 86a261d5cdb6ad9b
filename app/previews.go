package app

import (
	"context"
	"net"
	"net/url"
	"strconv"

	"buddi/surfaces/dashboard"
	"buddi/surfaces/preview"
)

// previews is the dashboard's view of the preview server.
type previews struct {
	srv  *preview.Server
	port int
}

func (p previews) Link(ctx context.Context, host, plugin, name string) (string, error) {
	return p.srv.Link(ctx, host, p.port, plugin, name)
}

func (p previews) Check(ctx context.Context, plugin, name string) dashboard.PreviewCheck {
	c := p.srv.CheckPreview(ctx, plugin, name)
	return dashboard.PreviewCheck{OK: c.OK, AbsoluteAssets: c.AbsoluteAssets, Problem: c.Problem}
}

// refusedPorts are the ports a preview never reaches: buddi's two listeners and the
// database's, when it listens on TCP.
func refusedPorts(web, prev net.Addr, databaseURL string) []int {
	var out []int
	for _, a := range []net.Addr{web, prev} {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				out = append(out, n)
			}
		}
	}
	if u, err := url.Parse(databaseURL); err == nil && u.Port() != "" {
		if n, err := strconv.Atoi(u.Port()); err == nil {
			out = append(out, n)
		}
	}
	return out
}
