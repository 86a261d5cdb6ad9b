package email

import (
	"embed"
	"io/fs"

	"buddi/plugins"
)

// Name is the plugin's name; its tools will be "email.<verb>".
const Name = "email"

// Schema is the Postgres schema the plugin owns.
const Schema = "email"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations returns the plugin's SQL migrations (goose's format, at the root).
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}

// Version is the plugin's version; it is part of every action's hash.
const Version = "0.1.0"

// Manifest is the email plugin as compiled in today: its schema, so that accounts can be
// added and read; no tools, source or views yet (issue 20 adds them).
func Manifest() plugins.Manifest {
	return plugins.Manifest{
		Name:        Name,
		Version:     Version,
		Description: "Email accounts read over IMAP; every message is untrusted text a stranger wrote.",
		Schema:      Schema,
		Migrations:  Migrations(),
	}
}
