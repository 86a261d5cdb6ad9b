// Package boundary holds the test that keeps core's import direction: plugins import core,
// core imports no plugin, and core imports none of the adapters around it (surfaces, the
// app, the commands). Core may import buddi/plugins itself, the contract. The package
// has no code; its test walks every package under buddi/core with go list.
package boundary
