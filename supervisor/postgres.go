package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"buddi/actors"
	"buddi/pgcluster"
)

// pgStartWait bounds a restart of the server process.
const pgStartWait = 2 * time.Minute

// Postgres returns the producer of the actor that supervises the embedded cluster's server
// process, already started by the caller: when the process dies the actor fails, and its
// restart starts the server again (recovering its pid file).
func Postgres(cluster *pgcluster.Cluster, log *slog.Logger) func() actors.Actor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return actors.Go("postgres", func(ctx context.Context) error {
		if cluster.Pid() == 0 {
			sctx, cancel := context.WithTimeout(ctx, pgStartWait)
			err := cluster.Start(sctx)
			cancel()
			if err != nil {
				return fmt.Errorf("restart postgres: %w", err)
			}
			log.Info("postgres restarted", "pid", cluster.Pid())
		}
		select {
		case <-cluster.Done():
			return fmt.Errorf("postgres exited: %v", cluster.ExitErr())
		case <-ctx.Done():
			return nil
		}
	})
}
