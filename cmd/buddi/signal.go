package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signalContext ends on SIGINT or SIGTERM; a second signal is left to its default action,
// so a stuck stop can still be interrupted.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
