package app

import (
	"context"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/artifact"
	"buddi/core/seal"
	"buddi/migrations"
	"buddi/plugins"
	artifactsplugin "buddi/plugins/artifacts"
	"buddi/plugins/developer"
	"buddi/plugins/developer/shot"
	"buddi/plugins/email"
	"buddi/plugins/host"
	"buddi/plugins/memory"
	"buddi/plugins/web"
	"buddi/runtime/canvas"
	"buddi/runtime/delegate"
	"buddi/runtime/platform"
	"buddi/runtime/run"
	"buddi/scheduler"
	"buddi/sentinels"
	"buddi/surfaces/preview"
)

// Manifests are the plugins compiled into this build, over the application's pool, the
// data directory and, in buddi serve, the process host of the supervision tree (nil
// elsewhere). The composition root is the one place that names them; core never imports a
// plugin.
//
// Without the installation's seal key the developer plugin honours no workspace, mode or
// remembered command: these manifests serve for their schemas, specs and sentinels' names.
// The plugins installed in home (plugins.json) follow; their tools refuse to run here.
func Manifests(pool *pgxpool.Pool, home string, processes developer.ProcessHost) []plugins.Manifest {
	return append(ServeManifests(pool, home, processes, nil, scheduler.DefaultReminderLimits, seal.Key{}, nil, nil), installedManifests(home)...)
}

// ServeManifests are the Manifests as buddi serve runs them: with the preview server behind
// developer.preview, headless Chromium behind developer.screenshot, core's artifact store,
// the seal key the developer plugin's records are checked under (refusals logged to log), and
// the mission tools telling the owner through tell (notifyOwner).
func ServeManifests(pool *pgxpool.Pool, home string, processes developer.ProcessHost, previews *preview.Server, reminders scheduler.ReminderLimits, key seal.Key, tell scheduler.Tell, log *slog.Logger) []plugins.Manifest {
	deps := developer.Deps{Pool: pool, DataDir: home, Processes: processes, Seal: key, Log: log}
	if previews != nil {
		deps.Previews = previewChecker{previews}
		deps.Screenshots = shot.Chromium{}
		deps.Artifacts = artifacts{artifact.NewStore(pool, home)}
	}
	var files artifactsplugin.Deps // without a database, the artifacts tools say there is no store
	if pool != nil {
		files.Store = artifact.NewStore(pool, home)
	}
	return []plugins.Manifest{
		developer.Manifest(deps),
		host.Manifest(host.Deps{}),
		artifactsplugin.Manifest(files),
		web.Manifest(web.Deps{Pool: pool, Search: web.SearchFromEnv(os.Getenv)}),
		memory.Manifest(memory.Deps{Pool: pool}),
		email.Manifest(), // bound to the database, artifact store and vault in buddi serve (email.BindTools, email.Bind)
		run.Manifest(pool),
		canvas.Manifest(pool),
		delegate.Manifest(), // bound to the runtime in buddi serve (delegate.Bind)
		platform.Manifest(), // bound to the catalogue and registry in buddi serve (platform.Bind)
		scheduler.ManifestTelling(pool, (&sentinels.Engine{Pool: pool}).AllMuted, tell),
		scheduler.ScheduleManifest(pool),
		scheduler.ReminderManifest(pool, reminders),
	}
}

// previewChecker answers developer.preview from the preview server.
type previewChecker struct{ srv *preview.Server }

func (p previewChecker) Check(ctx context.Context, name string) (bool, bool, string) {
	c := p.srv.CheckPreview(ctx, developer.Name, name)
	return c.OK, c.AbsoluteAssets, c.Problem
}

// artifacts keeps developer.screenshot's files in core's store.
type artifacts struct{ store *artifact.Store }

func (a artifacts) Save(ctx context.Context, agent, conv, runID, name, mediaType, source string, data []byte) (string, error) {
	saved, err := a.store.Save(ctx, artifact.Artifact{Agent: agent, ConversationID: conv, RunID: runID, Name: name, MediaType: mediaType, Source: source}, data)
	return saved.ID, err
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
