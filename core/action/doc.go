// Package action holds actions and their approvals (seed 004, "Actions and approvals").
//
// An action is an immutable row made before any approval is asked for: the tool and its
// version, canonical arguments, the full effect envelope with its declared choices and
// preconditions, an expiry, the policy version, and a keyed hash (core/seal) over all of it,
// so whoever can write the database but does not hold the key cannot make an action that
// checks. The database refuses UPDATE and DELETE on it. Its approval is a state machine:
//
//	pending → approved → executing → succeeded | failed | unknown
//	pending → rejected | expired
//	pending → refused    (the action's seal does not check)
//	approved → refused   (the effect changed since approval, or a seal does not check; it
//	                      never left the machine)
//	approved → expired   (not begun within ApprovalWindow of the approval)
//
// The decision is sealed as well: the action's seal, the state decided, who decided, the
// picks and when.
//
// Deciding is one atomic claim: of two surfaces deciding at once exactly one wins, and the
// other is told which way it went. Standing permissions (tools that opt into reusable
// approval) live here too.
package action
