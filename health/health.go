// Package health is the shape of buddi's health report: what GET /api/health answers and
// what buddi doctor reads from a running buddi.
package health

import (
	"errors"
	"time"

	"buddi/core/vault"
)

// Report is the whole answer of /api/health.
type Report struct {
	// Status is "ok" when every part works, "degraded" otherwise (then /api/health answers
	// 503 Service Unavailable, with this report as its body).
	Status    string    `json:"status"`
	Version   string    `json:"version"`    // the release the binary was built from
	Pid       int       `json:"pid"`        // the serving process's id
	StartedAt time.Time `json:"started_at"` // when it started, in UTC
	// UptimeSeconds is whole seconds since the start.
	UptimeSeconds int64     `json:"uptime_seconds"`
	Listener      string    `json:"listener"`           // the dashboard's address, host:port
	Database      Database  `json:"database"`           // the database part
	Queue         Queue     `json:"queue"`              // the queue part
	Actors        []Actor   `json:"actors"`             // the supervision tree, parents first
	Telegram      *Telegram `json:"telegram,omitempty"` // the Telegram surface, when a bot token is set
	Tailnet       *Tailnet  `json:"tailnet,omitempty"`  // the tailnet node, when it is on
	Vault         *Vault    `json:"vault,omitempty"`    // the vault as this buddi opened it
	Recovery      string    `json:"recovery,omitempty"` // set in recovery mode after a restore: what holds and how to leave it
	Disk          *Disk     `json:"disk,omitempty"`     // the free space where the home is; nil when it could not be measured
	Problems      []string  `json:"problems,omitempty"` // one line each; empty when Status is "ok"
	// Warnings are what works for now and needs the owner soon (a nearly full disk), one line
	// each: they leave Status "ok".
	Warnings  []string  `json:"warnings,omitempty"`
	CheckedAt time.Time `json:"checked_at"` // when this report was made, in UTC
}

// Vault is the vault as the serving buddi opened it: the one its agents' keys are read from,
// whatever the environment of the shell that asks.
type Vault struct {
	Open    bool   `json:"open"`              // its secrets can be read
	Where   string `json:"where"`             // where the values live, never a value
	Problem string `json:"problem,omitempty"` // why it is locked, one sentence for the owner
}

// VaultOf reports v: open, or locked and why (the *vault.LockedError's Reason).
func VaultOf(v vault.Vault) *Vault {
	err := v.Check()
	if err == nil {
		return &Vault{Open: true, Where: v.String()}
	}
	reason := err.Error()
	if le, ok := errors.AsType[*vault.LockedError](err); ok {
		reason = le.Reason
	}
	return &Vault{Where: v.String(), Problem: reason}
}

// Telegram is the Telegram surface's part.
type Telegram struct {
	Down bool `json:"down"` // the token was refused (401): set a new one with buddi telegram setup
	// SinceLastPollSeconds is how long ago a poll last succeeded (-1: never).
	SinceLastPollSeconds int64 `json:"since_last_poll_seconds"`
}

// Tailnet is the embedded tailnet node's part.
type Tailnet struct {
	State    string   `json:"state"`               // starting, needs-login, needs-approval, running or stopped
	Hostname string   `json:"hostname"`            // the name it asked for
	DNSName  string   `json:"dns_name,omitempty"`  // its MagicDNS name
	IPs      []string `json:"ips,omitempty"`       // its tailnet addresses
	HTTPS    bool     `json:"https"`               // the dashboard is also served on 443 with the tailnet's certificate
	URL      string   `json:"url,omitempty"`       // the dashboard's address on the tailnet
	LoginURL string   `json:"login_url,omitempty"` // where to log the node in, when it needs it
	Error    string   `json:"error,omitempty"`     // what went wrong
	Owner    string   `json:"owner,omitempty"`     // the owner's tailnet login; empty until set
	// Ports are the developer processes served on tailnet ports of their own.
	Ports []TailnetPort `json:"ports,omitempty"`
	// Problem is one sentence when the node is not serving, or "".
	Problem string `json:"problem,omitempty"`
}

// TailnetPort is one developer process on a tailnet port of its own.
type TailnetPort struct {
	Process string `json:"process"` // the process's name
	Port    int    `json:"port"`    // its port, locally and on the tailnet
}

// Database is the database part.
type Database struct {
	// Source is "embedded" or "url".
	Source string `json:"source"`
	// Target names the server, password masked.
	Target    string `json:"target"`
	Reachable bool   `json:"reachable"`         // the server answered
	Version   string `json:"version,omitempty"` // the server's server_version, when it answered
	Error     string `json:"error,omitempty"`   // why it did not answer
}

// Queue is the River part.
type Queue struct {
	Running bool             `json:"running"`         // the River client is working jobs
	Queues  []QueueInfo      `json:"queues"`          // in name order
	Jobs    map[string]int64 `json:"jobs"`            // by state, every state present
	Failed  int64            `json:"failed"`          // jobs River discarded: the work will not happen
	Error   string           `json:"error,omitempty"` // why the queue's tables could not be read
}

// QueueInfo is one named queue.
type QueueInfo struct {
	Name   string `json:"name"`   // the queue's name
	Paused bool   `json:"paused"` // paused in River (paused_at is set)
}

// Actor is one node of the supervision tree.
type Actor struct {
	Path       string `json:"path"`               // e.g. "root/surfaces/dashboard"
	Parent     string `json:"parent,omitempty"`   // the parent's path; empty at the top
	Supervisor bool   `json:"supervisor"`         // true for a supervisor, false for a worker
	Strategy   string `json:"strategy,omitempty"` // a supervisor's strategy and budget, in words
	Restarts   int    `json:"restarts"`           // restarts since it was first spawned
	State      string `json:"state"`              // "running", "restarting" or "stopped"
}
