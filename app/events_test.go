package app

import (
	"testing"

	"buddi/actors"
	"buddi/core/events"
)

// The supervisor's decisions are recorded under the kinds actors names them by: the recorder
// in Serve maps one to the other, and a stored row's kind is the same either way.
func TestSupervisorKindsAreTheActorsOwn(t *testing.T) {
	tests := []struct {
		actors string
		kind   events.Kind
	}{
		{actors.EventRestarted, events.SupervisorRestarted},
		{actors.EventStopped, events.SupervisorStopped},
	}
	for _, tt := range tests {
		if string(tt.kind) != tt.actors {
			t.Errorf("%q is recorded for the actors' %q; want the same kind", tt.kind, tt.actors)
		}
	}
}
