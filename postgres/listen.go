package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Listen holds a connection on LISTEN channel: it calls listening once
// the connection listens, then notified with the payload of every
// notification, until ctx ends or the connection is lost, and returns
// why (ctx's error when it ended). The connection is one of its own,
// made with the pool's settings but outside it: held for as long as the
// node runs, a pooled one would leave the requests one connection fewer,
// and a busy pool would hold back the listening.
func (db *DB) Listen(ctx context.Context, channel string, listening func(), notified func(payload string)) error {
	conn, err := db.ownConnection(ctx, "")
	if err != nil {
		return fmt.Errorf("connect to listen on %s: %w", channel, err)
	}
	defer closeConnection(conn)
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen on %s: %w", channel, err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if n != nil {
			notified(n.Payload)
		}
		if err != nil {
			return fmt.Errorf("wait for notifications on %s: %w", channel, err)
		}
	}
}

// ownConnection makes a connection of its own, with the pool's settings
// but outside it, named application where that is not "": a listening
// or locking session is held for as long as its work, which a pooled
// connection would take from the requests.
func (db *DB) ownConnection(ctx context.Context, application string) (*pgx.Conn, error) {
	cfg := db.pool.Config().ConnConfig.Copy()
	if application != "" {
		cfg.RuntimeParams["application_name"] = application
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// closeConnection closes a connection of its own (a listening or a
// locking one), waiting at most pingTimeout for the server to hear of it:
// its ctx may be over, and its server gone.
func closeConnection(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	_ = conn.Close(ctx) // the server ends the session when the socket closes anyway
}
