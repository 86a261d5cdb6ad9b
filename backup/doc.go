// Package backup makes, checks and restores buddi's backups (seed 004, "Secrets and
// operations"): one archive holding a consistent pg_dump of every schema buddi owns (core's,
// River's and the plugins'), the artifact files, the owner's agent and skill files,
// plugins.json, the saved time zone, and a manifest (the version, the PostgreSQL major, when,
// the rows of every table, the SHA-256 of every member).
//
// Secrets are never in an archive: not the vault, not its key, not seal.key. Without the old
// seal.key every sealed row of a restored database (sign-in sessions, paired phones,
// standing permissions, decisions) no longer checks, so the owner signs in, pairs and grants
// again; the vault's secrets are set again. A restore puts buddi in recovery mode (Recovery):
// all unattended work stays paused until the owner has read the checklist and runs
// `buddi resume`, so a restored buddi does not act on the queue of the day the backup was taken.
//
// An archive is a tar.gz, or that tar.gz encrypted with age to a passphrase (scrypt).
package backup
