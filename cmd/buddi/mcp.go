package main

import (
	"errors"
	"fmt"
	"os"

	"buddi/surfaces/mcpserver"
	"buddi/surfaces/webauth"
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
	token, err := webauth.ReadCLIToken(cfg.Home)
	if errors.Is(err, os.ErrNotExist) {
		return &exitError{code: 3, err: fmt.Errorf("buddi has not been started with BUDDI_HOME=%s yet: start it with `buddi serve`", cfg.Home)}
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if err := webauth.CheckListener(cfg.WebAddr()); err != nil {
		return &exitError{code: 1, err: err}
	}
	endpoint := "http://" + cfg.WebAddr() + "/mcp"
	if err := mcpserver.Bridge(env.ctx, endpoint, token, os.Stdin, os.Stdout, env.log); err != nil && env.ctx.Err() == nil {
		return &exitError{code: 3, err: err}
	}
	return nil
}
