package gateway

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/migrations"
	"buddi/plugins"
	"buddi/plugins/developer"
)

// Manifests are the plugins compiled into this build, over the application's pool and the
// data directory. The composition root is the one place that names them; core never
// imports a plugin.
func Manifests(pool *pgxpool.Pool, home string) []plugins.Manifest {
	return []plugins.Manifest{
		developer.Manifest(developer.Deps{Pool: pool, DataDir: home}),
	}
}

// Schemas are the plugins' own schemas with their migrations, applied after core's.
func Schemas(manifests []plugins.Manifest) []migrations.Set {
	var sets []migrations.Set
	for _, m := range manifests {
		if m.Schema != "" && m.Migrations != nil {
			sets = append(sets, migrations.Set{Schema: m.Schema, FS: m.Migrations})
		}
	}
	return sets
}
