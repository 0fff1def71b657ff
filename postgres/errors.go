package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"companydocs"
)

// errPoolExhausted is a connection wait that ran out: every connection
// was busy for the whole acquire timeout.
var errPoolExhausted = errors.New("every connection of the pool stayed busy for the acquire timeout")

// classify turns a database failure that says nothing about the request
// (the server is gone or restarting, no connection, the statement timeout,
// the pool exhausted, a conflict that outlived the retries) into
// service_unavailable. Application errors, constraint violations and the
// caller's own cancellation are returned as they are.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var app *companydocs.Error
	if errors.As(err, &app) {
		return err
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return err // the caller left
	}
	if unavailable(err) {
		// the cause stays in the text for the log; a client reads the
		// message alone (companydocs.ErrorMessageIn)
		return fmt.Errorf("%w (%w)", companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.database_unavailable", nil), err)
	}
	return err
}

// unavailable reports whether err says the database cannot answer now,
// rather than something about the statement.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableState(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	// net.OpError and DNSError, not net.Error, which a file's
	// fs.PathError satisfies too: a missing file is no outage
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &opErr), errors.As(err, &dnsErr),
		errors.Is(err, errPoolExhausted), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err), pgconn.SafeToRetry(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return false
}

// unavailableState lists the SQLSTATEs that mean "not now": connection
// exceptions (08), insufficient resources (53: too many connections, out
// of memory or disk), operator intervention (57: the statement timeout
// 57014, shutdown 57P01-57P03), a read-only standby (25006), and the
// conflicts that outlived the retries (40001, 40P01).
func unavailableState(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"), strings.HasPrefix(code, "57"):
		return true
	case code == "25006", code == "40001", code == "40P01":
		return true
	}
	return false
}

// retryable reports whether the transaction can run again as it is:
// PostgreSQL aborted it for a serialization failure or a deadlock, or the
// request never left for the server (pgconn.SafeToRetry, e.g. a pooled
// connection found dead on first use).
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}
