// Package health is the shape of buddi's health report: what GET /api/health answers and
// what buddi doctor reads from a running buddi.
package health

import "time"

// Report is the whole answer of /api/health.
type Report struct {
	// Status is "ok" when every part works, "degraded" otherwise.
	Status    string    `json:"status"`
	Version   string    `json:"version"`
	Pid       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	// UptimeSeconds is whole seconds since the start.
	UptimeSeconds int64     `json:"uptime_seconds"`
	Listener      string    `json:"listener"`
	Database      Database  `json:"database"`
	Queue         Queue     `json:"queue"`
	Actors        []Actor   `json:"actors"`
	Problems      []string  `json:"problems,omitempty"`
	CheckedAt     time.Time `json:"checked_at"`
}

// Database is the database part.
type Database struct {
	// Source is "embedded" or "url".
	Source string `json:"source"`
	// Target names the server, password masked.
	Target    string `json:"target"`
	Reachable bool   `json:"reachable"`
	Version   string `json:"version,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Queue is the River part.
type Queue struct {
	Running bool             `json:"running"`
	Queues  []QueueInfo      `json:"queues"`
	Jobs    map[string]int64 `json:"jobs"`
	Failed  int64            `json:"failed"`
	Error   string           `json:"error,omitempty"`
}

// QueueInfo is one named queue.
type QueueInfo struct {
	Name   string `json:"name"`
	Paused bool   `json:"paused"`
}

// Actor is one node of the supervision tree.
type Actor struct {
	Path       string `json:"path"`
	Parent     string `json:"parent,omitempty"`
	Supervisor bool   `json:"supervisor"`
	Strategy   string `json:"strategy,omitempty"`
	Restarts   int    `json:"restarts"`
	State      string `json:"state"`
}
