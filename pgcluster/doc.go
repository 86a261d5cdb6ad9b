// Package pgcluster runs buddi's own PostgreSQL cluster inside the data directory when no
// DATABASE_URL is given: it finds the server binaries, runs initdb on first use, starts
// postgres listening only on a unix socket in the data directory, recovers after a hard kill
// (a stale pid file, or a postgres left running by a killed buddi), and stops it.
//
// When buddi runs as root the server runs as the unprivileged "postgres" account, which
// owns the cluster's directory; postgres and initdb refuse to run as root.
package pgcluster
