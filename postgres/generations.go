package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// States of a published generation.
const (
	PublicationUploading = "uploading"
	PublicationLive      = "live"
)

// Publication is a generation recorded in the metastore.
type Publication struct {
	Name  string
	State string
	// Manifest is the generation's files as the publisher recorded them
	// (JSON, read by the one who wrote it).
	Manifest    json.RawMessage
	Bytes       int64
	Profiles    int64
	CreatedAt   time.Time
	PublishedAt time.Time // zero while uploading
}

// IndexNode is a node as it last reported itself.
type IndexNode struct {
	Node       string
	Generation string // the generation it serves; "" none yet
	// Installing is the generation it downloads or installs ("" none):
	// retention keeps it as it keeps the served one.
	Installing string
	// Damaged names a published generation the node found damaged and
	// why ("" none); it backs off before fetching it again.
	Damaged     string
	Behind      int
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// BeginPublication records name as being uploaded, with its manifest; it
// is not visible to nodes until CompletePublication. Beginning a
// publication that is already live changes nothing; one already
// uploading (a killed publish run again) starts over with this manifest.
func (db *DB) BeginPublication(ctx context.Context, p Publication) error {
	return db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO published_generations (name, state, manifest, bytes, profiles, created_at)
			VALUES ($1, 'uploading', $2, $3, $4, now())
			ON CONFLICT (name) DO UPDATE SET manifest = EXCLUDED.manifest, bytes = EXCLUDED.bytes, profiles = EXCLUDED.profiles
			WHERE published_generations.state = 'uploading'`, p.Name, []byte(p.Manifest), p.Bytes, p.Profiles)
		return wrap(err, "begin the publication of "+p.Name)
	})
}

// ErrNotUploading is returned by CompletePublication for a generation
// that was not begun, or is live already.
var ErrNotUploading = errors.New("the generation is not being published")

// CompletePublication makes name live, in one transaction: from then on
// nodes follow it.
func (db *DB) CompletePublication(ctx context.Context, name string) error {
	return db.update(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE published_generations SET state = 'live', published_at = now()
			WHERE name = $1 AND state = 'uploading'`, name)
		if err != nil {
			return wrap(err, "complete the publication of "+name)
		}
		if tag.RowsAffected() != 1 {
			return ErrNotUploading
		}
		return nil
	})
}

// publicationColumns are the columns scanPublication reads.
const publicationColumns = `name, state, manifest, bytes, profiles, created_at, coalesce(published_at, 'epoch')`

func scanPublication(r pgx.CollectableRow) (Publication, error) {
	var p Publication
	err := r.Scan(&p.Name, &p.State, &p.Manifest, &p.Bytes, &p.Profiles, &p.CreatedAt, &p.PublishedAt)
	if p.PublishedAt.Equal(time.Unix(0, 0)) {
		p.PublishedAt = time.Time{}
	}
	return p, err
}

// Publications returns every recorded generation, the newest first.
func (db *DB) Publications(ctx context.Context) ([]Publication, error) {
	return db.publications(ctx, `SELECT `+publicationColumns+` FROM published_generations ORDER BY name DESC`)
}

// NewestLive returns the newest live publication (names sort by creation
// time), or nil when none is.
func (db *DB) NewestLive(ctx context.Context) (*Publication, error) {
	list, err := db.publications(ctx, `SELECT `+publicationColumns+` FROM published_generations
		WHERE state = 'live' ORDER BY name DESC LIMIT 1`)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

func (db *DB) publications(ctx context.Context, query string) ([]Publication, error) {
	var out []Publication
	err := db.view(ctx, func(tx pgx.Tx) error {
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
func (db *DB) LiveNewerThan(ctx context.Context, name string) (int, error) {
	var n int
	err := db.view(ctx, func(tx pgx.Tx) error {
		return wrap(tx.QueryRow(ctx, `SELECT count(*) FROM published_generations WHERE state = 'live' AND name > $1`, name).Scan(&n),
			"count the newer published generations")
	})
	return n, err
}

// DeletePublication removes name's record (once its objects are gone).
func (db *DB) DeletePublication(ctx context.Context, name string) error {
	return db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM published_generations WHERE name = $1`, name)
		return wrap(err, "delete the publication of "+name)
	})
}

// Heartbeat records what node serves and installs, behind newer live
// publications, now.
func (db *DB) Heartbeat(ctx context.Context, n IndexNode) error {
	return db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO index_nodes (node, generation, installing, damaged, behind, started_at, heartbeat_at)
			VALUES ($1, $2, $3, $4, $5, $6, now())
			ON CONFLICT (node) DO UPDATE SET generation = EXCLUDED.generation, installing = EXCLUDED.installing,
				damaged = EXCLUDED.damaged, behind = EXCLUDED.behind, started_at = EXCLUDED.started_at, heartbeat_at = now()`,
			n.Node, n.Generation, n.Installing, n.Damaged, n.Behind, n.StartedAt)
		return wrap(err, "record the heartbeat of "+n.Node)
	})
}

// LiveNodes counts the nodes whose last heartbeat came within the last
// within:
// the nodes that share the rate limits (httpapi.NodeShare).
func (db *DB) LiveNodes(ctx context.Context, within time.Duration) (int, error) {
	var n int
	err := db.view(ctx, func(tx pgx.Tx) error {
		return wrap(tx.QueryRow(ctx, `SELECT count(*) FROM index_nodes WHERE heartbeat_at > now() - make_interval(secs => $1)`,
			within.Seconds()).Scan(&n), "count the live nodes")
	})
	return n, err
}

// IndexNodes returns every node that reported itself, by name.
func (db *DB) IndexNodes(ctx context.Context) ([]IndexNode, error) {
	var out []IndexNode
	err := db.view(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT node, generation, installing, damaged, behind, started_at, heartbeat_at FROM index_nodes ORDER BY node`)
		if err != nil {
			return wrap(err, "list the nodes")
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (IndexNode, error) {
			var n IndexNode
			return n, r.Scan(&n.Node, &n.Generation, &n.Installing, &n.Damaged, &n.Behind, &n.StartedAt, &n.HeartbeatAt)
		})
		return wrap(err, "list the nodes")
	})
	return out, err
}
