package main

import (
	"os"

	"buddi/surfaces/mcpserver"
)

type mcpCmd struct{}

// Run speaks MCP on stdin and stdout for a client that starts `buddi mcp` as its server, and
// carries every call to the running buddi's /mcp endpoint with the command line's token: the
// same tools and rules as over HTTP. Logs go to stderr, never to stdout, which is the
// protocol's.
func (mcpCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	cl, err := dialServer(cfg) // says so in one sentence when buddi is not running
	if err != nil {
		return err
	}
	if err := mcpserver.Bridge(env.ctx, cl.base+"/mcp", cl.token, os.Stdin, os.Stdout, env.log); err != nil && env.ctx.Err() == nil {
		return &exitError{code: 3, err: err}
	}
	return nil
}
