package actors_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// protoactor's dead-letter log throttle starts a goroutine that
		// sleeps DeadLetterThrottleInterval (1 s) and exits (actor/throttler.go,
		// created from NewDeadLetter). It is started by the first dead letter
		// in a second, and protoactor itself sends some: a stopping parent
		// sends Stop to every child it still lists, even one that has just
		// terminated (actor_context.go, stopAllChildren). Checked: this is
		// the goroutine's name with and without -race.
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	)
}
