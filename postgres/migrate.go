package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"companydocs"
)

// migrations are the schema's versions, applied in order by goose; a
// released file is never edited, a change is a new file.
//
//go:embed migrations/*.sql
var migrations embed.FS

// migrationLockID names the advisory lock the migrations run under, so
// that nodes starting at once apply each version once; any constant no
// other program on the database uses (goose's default is shared by every
// goose user).
const migrationLockID = 0x636f_6d70_646f_6373 // "compdocs"

// migrate applies the migrations this binary has, under the advisory
// lock, after refusing a schema newer than it knows. It runs on a
// connection of its own, without the pool's statement timeout, since a
// migration may take longer than a request.
func migrate(ctx context.Context, cfg *pgx.ConnConfig) error {
	sqlDB := stdlib.OpenDB(*cfg)
	defer sqlDB.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// The lock is tried once a second for up to 5 minutes (goose polls
	// pg_try_advisory_lock rather than waiting in pg_advisory_lock).
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, fsys, goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("read the schema migrations: %w", err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return classify(ctx, fmt.Errorf("read the schema version: %w", err))
	}
	if known := latestVersion(p); current > known {
		return companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.schema_too_new", companydocs.Args{"version": current, "known": known})
	}
	if _, err := p.Up(ctx); err != nil {
		return classify(ctx, fmt.Errorf("apply the schema migrations: %w", err))
	}
	return nil
}

// latestVersion is the newest schema version this binary has.
func latestVersion(p *goose.Provider) int64 {
	var v int64
	for _, s := range p.ListSources() {
		v = max(v, s.Version)
	}
	return v
}

// SchemaVersion is the newest schema version this binary has.
func SchemaVersion() int64 {
	entries, _ := fs.Glob(migrations, "migrations/*.sql")
	var v int64
	for _, e := range entries {
		if n, err := goose.NumericComponent(e); err == nil {
			v = max(v, n)
		}
	}
	return v
}
