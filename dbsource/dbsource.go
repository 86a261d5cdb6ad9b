// Package dbsource opens the database buddi uses: the server at DATABASE_URL, or the
// embedded cluster in the data directory. A command other than serve that finds the cluster
// stopped starts it for its own use and stops it again; one that finds buddi serving uses the
// running server.
//
// On the embedded cluster two roles connect: the owner (pgcluster.Owner), only to create the
// database and to migrate (Source.Migrate), and the application role (pgcluster.App) for
// everything else: Source.DSN and Source.Pool are the application role's. With DATABASE_URL
// both are the URL's role: what it may do is up to whoever runs that server.
package dbsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/config"
	"buddi/datadir"
	"buddi/db"
	"buddi/migrations"
	"buddi/pgcluster"
)

// DatabaseName is the database buddi keeps its schemas in, on the embedded cluster.
const DatabaseName = "buddi"

// ErrNotInitialised means the data directory holds no cluster yet.
var ErrNotInitialised = errors.New("dbsource: not initialised")

// NotInitialisedError names the data directory.
type NotInitialisedError struct {
	Home string // the data directory (BUDDI_HOME)
}

// Error says what happened in one sentence.
func (e *NotInitialisedError) Error() string {
	return fmt.Sprintf("buddi has not been set up in %s yet: run `buddi serve` once (or `buddi db migrate`)", e.Home)
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *NotInitialisedError) Unwrap() error { return ErrNotInitialised }

// Source is an open database.
type Source struct {
	// Kind is "embedded" or "url".
	Kind string `json:"kind"`
	// Target names the server for a person, password masked.
	Target string `json:"target"`
	// DSN connects as the application role: on the embedded cluster pgcluster.App, with
	// DATABASE_URL the URL's role. It may hold a password: never print it.
	DSN string `json:"-"`
	// Pool is the application's pool, on DSN.
	Pool *pgxpool.Pool `json:"-"`
	// Cluster is the embedded cluster when this process runs it, else nil.
	Cluster *pgcluster.Cluster `json:"-"`

	// ownerDSN gives the owner's connection string, read only when migrating.
	ownerDSN func() (string, error)
	// appRole is the role Migrate grants the application's privileges to; "" with
	// DATABASE_URL, where the URL's role owns what it migrates.
	appRole string
	lock    *datadir.Lock
}

// Options say how to open.
type Options struct {
	// Serving is set by buddi serve, which already holds the data directory's lock and runs
	// the embedded cluster for as long as it lives.
	Serving bool
	// CreateIfMissing runs initdb when the data directory has no cluster yet. Serve and
	// db migrate set it; doctor and db status do not.
	CreateIfMissing bool
	// Fast is for tests: an embedded cluster without fsync.
	Fast bool
	// Log receives what the embedded cluster does. Default: discard.
	Log *slog.Logger
}

// Open connects to the configured database.
func Open(ctx context.Context, cfg config.Config, opts Options) (*Source, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if !cfg.Embedded() {
		pool, err := db.Open(ctx, cfg.DatabaseURL, db.Options{})
		if err != nil {
			return nil, err
		}
		url := cfg.DatabaseURL
		return &Source{Kind: "url", Target: db.Describe(url), DSN: url, Pool: pool,
			ownerDSN: func() (string, error) { return url, nil }}, nil
	}
	bin, err := pgcluster.FindBinariesFor(cfg.PGBinDir, cfg.ClusterDir())
	if err != nil {
		return nil, err
	}
	cluster := pgcluster.New(pgcluster.Options{Dir: cfg.ClusterDir(), BinDir: bin, Log: opts.Log, Fast: opts.Fast})
	probe := pgcluster.New(pgcluster.Options{Dir: cfg.ClusterDir()})
	src := &Source{Kind: "embedded", appRole: pgcluster.App,
		ownerDSN: func() (string, error) { return probe.OwnerDSN(DatabaseName) }}
	if !cluster.Initialized() && !opts.CreateIfMissing {
		return nil, &NotInitialisedError{Home: cfg.Home}
	}
	if !opts.Serving {
		lock, err := datadir.TryLock(cfg.Home)
		switch {
		case errors.Is(err, datadir.ErrLocked):
			// buddi serve runs the cluster: use it.
			cluster = nil
		case err != nil:
			return nil, err
		default:
			src.lock = lock
		}
	}
	if cluster != nil {
		startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := cluster.Start(startCtx)
		cancel()
		if err != nil {
			src.lock.Release()
			return nil, fmt.Errorf("start the embedded database: %w", err)
		}
		src.Cluster = cluster
		if err := setUp(ctx, probe); err != nil {
			src.Close(ctx)
			return nil, err
		}
	}
	if src.DSN, err = probe.AppDSN(DatabaseName); err != nil {
		src.Close(ctx)
		return nil, err
	}
	src.Target = db.Describe(src.DSN)
	pool, err := db.Open(ctx, src.DSN, db.Options{})
	if err != nil {
		src.Close(ctx)
		return nil, err
	}
	src.Pool = pool
	return src, nil
}

// setUp is done, as the owner, by the process that runs the cluster (serve, or a command
// while serve is down): the database made if missing, and the application role granted its
// privileges on what is there (a database an earlier buddi migrated as its only role).
func setUp(ctx context.Context, cluster *pgcluster.Cluster) error {
	adminDSN, err := cluster.OwnerDSN("postgres")
	if err != nil {
		return err
	}
	if err := ensureDatabase(ctx, adminDSN); err != nil {
		return err
	}
	dsn, err := cluster.OwnerDSN(DatabaseName)
	if err != nil {
		return err
	}
	pool, err := db.Open(ctx, dsn, db.Options{Name: "buddi-setup", MaxConns: 2})
	if err != nil {
		return err
	}
	defer pool.Close()
	return migrations.Grant(ctx, pool, pgcluster.App)
}

func ensureDatabase(ctx context.Context, adminDSN string) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("connect to the embedded database: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", DatabaseName).Scan(&exists); err != nil {
		return fmt.Errorf("look for database %s: %w", DatabaseName, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+DatabaseName); err != nil {
		return fmt.Errorf("create database %s: %w", DatabaseName, err)
	}
	return nil
}

// OwnerDSN is the connection string of the role that owns buddi's schemas and migrates
// them: the embedded cluster's pgcluster.Owner (its password read from its file now), or
// DATABASE_URL. It holds a password: never print it.
// A Source built by hand has one role: its DSN's.
func (s *Source) OwnerDSN() (string, error) {
	if s.ownerDSN == nil {
		return s.DSN, nil
	}
	return s.ownerDSN()
}

// Migrate applies core's, the given plugin sets' and River's migrations as the owner and, on
// the embedded cluster, grants the application role what buddi needs at run time on them
// (migrations.Grant). It opens the owner's pool for the while and closes it.
func (s *Source) Migrate(ctx context.Context, log *slog.Logger, sets ...migrations.Set) ([]migrations.Applied, error) {
	dsn, err := s.OwnerDSN()
	if err != nil {
		return nil, err
	}
	pool, err := db.Open(ctx, dsn, db.Options{Name: "buddi-migrate", MaxConns: 4})
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	applied, err := migrations.Up(ctx, pool, log, sets...)
	if err != nil {
		return applied, err
	}
	if s.appRole != "" {
		if err := migrations.Grant(ctx, pool, s.appRole); err != nil {
			return applied, err
		}
	}
	return applied, nil
}

// AppDSN is the application role's connection string for the embedded cluster of the data
// directory home, its password read from its file as Open reads it. It holds a password:
// never print it.
func AppDSN(home string) (string, error) {
	return pgcluster.New(pgcluster.Options{Dir: config.Config{Home: home}.ClusterDir()}).AppDSN(DatabaseName)
}

// Close closes the pool and, when this process started the embedded cluster, stops it.
func (s *Source) Close(ctx context.Context) error {
	if s.Pool != nil {
		s.Pool.Close()
	}
	var err error
	if s.Cluster != nil {
		err = s.Cluster.Stop(ctx)
	}
	s.lock.Release()
	return err
}

// ServerVersion asks the server for its version.
func ServerVersion(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var v string
	err := pool.QueryRow(ctx, "SHOW server_version").Scan(&v)
	return v, err
}
