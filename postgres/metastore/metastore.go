package metastore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"companydocs/postgres"
	"companydocs/publication"

	"github.com/jackc/pgx/v5"
)

// Store is the metastore in the order store's PostgreSQL database: its
// tables published_generations and index_nodes (created by the order
// store's migrations, one schema per database) hold the generations
// published and the nodes that follow them.
type Store struct {
	db *postgres.DB
	// logger hears of a lost listening connection (ListenPublications).
	logger *slog.Logger
}

// New returns the metastore in db's database, logging to slog's default
// logger.
func New(db *postgres.DB) *Store { return &Store{db: db, logger: slog.Default()} }

// WithLogger makes s log to logger, and returns s.
func (s *Store) WithLogger(logger *slog.Logger) *Store {
	s.logger = logger
	return s
}

var _ publication.Metastore = (*Store)(nil)

// BeginPublication records name as being uploaded, with its manifest; it
// is not visible to nodes until CompletePublication. Beginning a
// publication that is already live changes nothing; one already
// uploading (a killed publish run again) starts over with this manifest.
func (s *Store) BeginPublication(ctx context.Context, p publication.Publication) error {
	return s.db.UpdateSQL(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO published_generations (name, state, manifest, bytes, profiles, created_at)
			VALUES ($1, 'uploading', $2, $3, $4, now())
			ON CONFLICT (name) DO UPDATE SET manifest = EXCLUDED.manifest, bytes = EXCLUDED.bytes, profiles = EXCLUDED.profiles
			WHERE published_generations.state = 'uploading'`, p.Name, []byte(p.Manifest), p.Bytes, p.Profiles)
		return wrap(err, "begin the publication of "+p.Name)
	})
}

// CompletePublication makes name live, in one transaction: from then on
// nodes follow it. The transaction notifies the nodes that listen
// (ListenPublications); PostgreSQL delivers the notification at the
// commit, so none hears of a generation it cannot read live yet, and
// none of one whose transaction rolled back.
func (s *Store) CompletePublication(ctx context.Context, name string) error {
	return s.db.UpdateSQL(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE published_generations SET state = 'live', published_at = now()
			WHERE name = $1 AND state = 'uploading'`, name)
		if err != nil {
			return wrap(err, "complete the publication of "+name)
		}
		if tag.RowsAffected() != 1 {
			return publication.ErrNotUploading
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, publicationChannel, name)
		return wrap(err, "notify the nodes of the publication of "+name)
	})
}

// publicationColumns are the columns scanPublication reads.
const publicationColumns = `name, state, manifest, bytes, profiles, created_at, coalesce(published_at, 'epoch')`

func scanPublication(r pgx.CollectableRow) (publication.Publication, error) {
	var p publication.Publication
	err := r.Scan(&p.Name, &p.State, &p.Manifest, &p.Bytes, &p.Profiles, &p.CreatedAt, &p.PublishedAt)
	if p.PublishedAt.Equal(time.Unix(0, 0)) {
		p.PublishedAt = time.Time{}
	}
	return p, err
}

// Publications returns every recorded generation, the newest first.
func (s *Store) Publications(ctx context.Context) ([]publication.Publication, error) {
	return s.publications(ctx, `SELECT `+publicationColumns+` FROM published_generations ORDER BY name DESC`)
}

// NewestLive returns the newest live publication (names sort by creation
// time), or nil when none is.
func (s *Store) NewestLive(ctx context.Context) (*publication.Publication, error) {
	list, err := s.publications(ctx, `SELECT `+publicationColumns+` FROM published_generations
		WHERE state = 'live' ORDER BY name DESC LIMIT 1`)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

func (s *Store) publications(ctx context.Context, query string) ([]publication.Publication, error) {
	var out []publication.Publication
	err := s.db.ViewSQL(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query)
		if err != nil {
			return wrap(err, "list the published generations")
		}
		out, err = pgx.CollectRows(rows, scanPublication)
		return wrap(err, "list the published generations")
	})
	return out, err
}

// LiveNewerThan counts the live publications newer than name.
func (s *Store) LiveNewerThan(ctx context.Context, name string) (int, error) {
	var n int
	err := s.db.ViewSQL(ctx, func(tx pgx.Tx) error {
		return wrap(tx.QueryRow(ctx, `SELECT count(*) FROM published_generations WHERE state = 'live' AND name > $1`, name).Scan(&n),
			"count the newer published generations")
	})
	return n, err
}

// DeletePublication removes name's record (once its objects are gone).
func (s *Store) DeletePublication(ctx context.Context, name string) error {
	return s.db.UpdateSQL(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM published_generations WHERE name = $1`, name)
		return wrap(err, "delete the publication of "+name)
	})
}

// Heartbeat records what node serves and installs, behind newer live
// publications, now.
func (s *Store) Heartbeat(ctx context.Context, n publication.Node) error {
	return s.db.UpdateSQL(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO index_nodes (node, generation, installing, damaged, behind, started_at, heartbeat_at)
			VALUES ($1, $2, $3, $4, $5, $6, now())
			ON CONFLICT (node) DO UPDATE SET generation = EXCLUDED.generation, installing = EXCLUDED.installing,
				damaged = EXCLUDED.damaged, behind = EXCLUDED.behind, started_at = EXCLUDED.started_at, heartbeat_at = now()`,
			n.Node, n.Generation, n.Installing, n.Damaged, n.Behind, n.StartedAt)
		return wrap(err, "record the heartbeat of "+n.Node)
	})
}

// LiveNodes counts the nodes whose last heartbeat came within the last
// within: the nodes that share the rate limits (httpapi.NodeShare).
func (s *Store) LiveNodes(ctx context.Context, within time.Duration) (int, error) {
	var n int
	err := s.db.ViewSQL(ctx, func(tx pgx.Tx) error {
		return wrap(tx.QueryRow(ctx, `SELECT count(*) FROM index_nodes WHERE heartbeat_at > now() - make_interval(secs => $1)`,
			within.Seconds()).Scan(&n), "count the live nodes")
	})
	return n, err
}

// IndexNodes returns every node that reported itself, by name.
func (s *Store) IndexNodes(ctx context.Context) ([]publication.Node, error) {
	var out []publication.Node
	err := s.db.ViewSQL(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT node, generation, installing, damaged, behind, started_at, heartbeat_at FROM index_nodes ORDER BY node`)
		if err != nil {
			return wrap(err, "list the nodes")
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (publication.Node, error) {
			var n publication.Node
			return n, r.Scan(&n.Node, &n.Generation, &n.Installing, &n.Damaged, &n.Behind, &n.StartedAt, &n.HeartbeatAt)
		})
		return wrap(err, "list the nodes")
	})
	return out, err
}

// wrap says what failed around err; nil stays nil.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
