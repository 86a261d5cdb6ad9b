// Package action holds actions and their approvals (seed 004, "Actions and approvals").
//
// An action is an immutable row made before any approval is asked for: the tool and its
// version, canonical arguments, the full effect envelope with its declared choices and
// preconditions, an expiry, the policy version, and a hash over envelope, tool, version and
// arguments. The database refuses UPDATE and DELETE on it. Its approval is a state machine:
//
//	pending → approved → executing → succeeded | failed | unknown
//	pending → rejected | expired
//	approved → refused   (the effect changed since approval; it never left the machine)
//
// Deciding is one atomic claim: of two surfaces deciding at once exactly one wins, and the
// other is told which way it went. Standing permissions (tools that opt into reusable
// approval) live here too.
package action
