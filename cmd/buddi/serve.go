package main

import (
	"buddi/gateway"
)

type serveCmd struct{}

func (serveCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	return gateway.Serve(env.ctx, cfg, env.log, gateway.Options{})
}
