// Package datadir owns buddi's data directory (BUDDI_HOME): creating it with mode 0700,
// proving it writable, and the lock that lets one buddi serve from it at a time.
package datadir
