package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPaymentEventsPruneReadsItsIndex: the prune's search for old ids has
// a plan through the index on the applied time. The planner is told not
// to scan the table, as it would not once 30 days of ids fill it; without
// that index its only other plan walks the whole primary key.
func TestPaymentEventsPruneReadsItsIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, newDatabase(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var plan []string
	err = db.view(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+oldPaymentEvents, time.Now(), 1000)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan, "\n"); !strings.Contains(got, "payment_events_applied") {
		t.Errorf("the prune's search does not use the index on the applied time:\n%s", got)
	}
}
