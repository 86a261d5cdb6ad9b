// Package dbsource opens the database buddi uses: the server at DATABASE_URL, or the
// embedded cluster in the data directory. A command other than serve that finds the cluster
// stopped starts it for its own use and stops it again; one that finds buddi serving uses the
// running server.
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
	// DSN connects to it (it may hold a password: never print it).
	DSN string `json:"-"`
	// Pool is the application's pool.
	Pool *pgxpool.Pool `json:"-"`
	// Cluster is the embedded cluster when this process runs it, else nil.
	Cluster *pgcluster.Cluster `json:"-"`

	lock *datadir.Lock
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
		return &Source{Kind: "url", Target: db.Describe(cfg.DatabaseURL), DSN: cfg.DatabaseURL, Pool: pool}, nil
	}
	bin, err := pgcluster.FindBinaries(cfg.PGBinDir)
	if err != nil {
		return nil, err
	}
	cluster := pgcluster.New(pgcluster.Options{Dir: cfg.ClusterDir(), BinDir: bin, Log: opts.Log, Fast: opts.Fast})
	src := &Source{Kind: "embedded"}
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
	}
	probe := pgcluster.New(pgcluster.Options{Dir: cfg.ClusterDir()})
	if err := ensureDatabase(ctx, probe.DSN("postgres")); err != nil {
		src.Close(ctx)
		return nil, err
	}
	src.DSN = probe.DSN(DatabaseName)
	src.Target = db.Describe(src.DSN)
	pool, err := db.Open(ctx, src.DSN, db.Options{})
	if err != nil {
		src.Close(ctx)
		return nil, err
	}
	src.Pool = pool
	return src, nil
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
