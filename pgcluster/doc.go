// Package pgcluster runs buddi's own PostgreSQL cluster inside the data directory when no
// DATABASE_URL is given: it finds the server binaries, runs initdb on first use, starts
// postgres listening only on a unix socket in the data directory, recovers after a hard kill
// (a stale pid file, or a postgres left running by a killed buddi), and stops it.
//
// Every connection proves its role's password (scram-sha-256; pg_hba.conf holds that one
// rule). Two roles: Owner, the superuser initdb makes, which owns buddi's database and runs
// the migrations, and App, which buddi's process and command line use for everything else
// and which may do no more than the migrations grant it. Their passwords are random, in 0600
// files beside the cluster's directory (PasswordFile), and reach the server only as SCRAM
// verifiers. A cluster an earlier buddi made with trust is converted on its first start.
//
// When buddi runs as root the server runs as the unprivileged "postgres" account, which
// owns the cluster's directory; postgres and initdb refuse to run as root. buddi never
// follows a path inside that directory (the account could put a link there), and the
// password files, root's, are not the account's to read.
package pgcluster
