package supervisor

import (
	"context"
	"fmt"
	"time"

	"buddi/actors"
	"buddi/pgcluster"
)

// pgExited tells the postgres actor its server process ended.
type pgExited struct{ err error }

// postgresActor supervises the embedded cluster's server process: when the process dies the
// actor fails, and its restart starts the server again (recovering its pid file).
type postgresActor struct {
	sys     *actors.System
	cluster *pgcluster.Cluster
}

// Postgres returns the producer of the actor that watches cluster, already started by the
// caller.
func Postgres(sys *actors.System, cluster *pgcluster.Cluster) func() actors.Actor {
	return func() actors.Actor { return &postgresActor{sys: sys, cluster: cluster} }
}

func (a *postgresActor) Receive(c *actors.Context) {
	switch m := c.Message().(type) {
	case actors.Started:
		if a.cluster.Pid() == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			err := a.cluster.Start(ctx)
			cancel()
			if err != nil {
				panic(fmt.Sprintf("restart postgres: %v", err))
			}
			c.Log().Info("postgres restarted", "pid", a.cluster.Pid())
		}
		done, self := a.cluster.Done(), c.Self()
		go func() {
			<-done
			a.sys.Send(self, pgExited{err: a.cluster.ExitErr()})
		}()
	case pgExited:
		panic(fmt.Sprintf("postgres exited: %v", m.err))
	}
}
