package email

import (
	"embed"
	"io/fs"
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
