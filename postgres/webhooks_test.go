package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"companydocs"
	"companydocs/ordering"
)

// TestMigrationMovesDeliveryBodies: migration 00004 moves the signed body
// out of every delivery record into one row per event, counted with its
// deliveries, the body's bytes as they were (a note holding \u0000, which
// jsonb would refuse, included); its Down puts them back. The store then
// reads the bodies and passes its check.
func TestMigrationMovesDeliveryBodies(t *testing.T) {
	ctx := context.Background()
	url := newDatabase(t)
	db, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{
		"evt_1": []byte(`{"type":"order.cancelled","timestamp":"2026-11-26T09:30:00.123456789Z","data":{"note":"<\u0000 \u003c \u2028 ä>"}}`),
		"evt_2": []byte(`{"type":"order.created","data":{}}`),
	}
	receivers := map[string][]string{"evt_1": {"wh_a", "wh_b"}, "evt_2": {"wh_b"}}
	newAccount(t, db, "acme", 0)
	mustUpdate(t, db, func(tx ordering.Tx) error { return seedDeliveries(tx, bodies, receivers) })
	db.Close()

	goose := gooseProvider(t, url)
	if _, err := goose.DownTo(ctx, 2); err != nil {
		t.Fatalf("migrate down to 2: %v", err)
	}
	inline := recordBodies(t, url)
	for _, ev := range []string{"evt_1", "evt_2"} {
		for _, ep := range receivers[ev] {
			if got := inline[ep+" "+ev]; got != string(bodies[ev]) {
				t.Errorf("after Down the delivery of %s to %s carries %s, want %s", ev, ep, got, bodies[ev])
			}
		}
	}

	db, err = Open(ctx, url, Options{})
	if err != nil {
		t.Fatalf("open and migrate up again: %v", err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Errorf("check after the migration: %v", err)
	}
	err = db.View(ctx, func(tx ordering.Tx) error {
		for ev, want := range bodies {
			if got, err := tx.EventBody(ev); err != nil || !bytes.Equal(got, want) {
				t.Errorf("body of %s after the migration: %s (%v), want %s", ev, got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var refs, carrying int
	mustQuery(t, db, "SELECT (SELECT refs FROM webhook_bodies WHERE event_id = 'evt_1'), (SELECT count(*) FROM webhook_deliveries WHERE strpos(record::text, '\"body\"') > 0)", &refs, &carrying)
	if refs != 2 || carrying != 0 {
		t.Errorf("after the migration: the shared body has %d references, %d records carry a body; want 2 and 0", refs, carrying)
	}
}

// seedDeliveries stores an order, its endpoints, and the deliveries of
// each event to its receivers with the event's body.
func seedDeliveries(tx ordering.Tx, bodies map[string][]byte, receivers map[string][]string) error {
	order := testOrder("ord_1", "acme")
	order.Order.Status = companydocs.OrderStatusCancelled
	if err := tx.InsertOrder(order); err != nil {
		return err
	}
	for _, id := range []string{"wh_a", "wh_b"} {
		ep := &ordering.EndpointRecord{Account: "acme", WebhookEndpoint: companydocs.WebhookEndpoint{ID: id, URL: "https://example.com/hook", CreatedAt: t0, Secret: "whsec_x"}}
		if err := tx.InsertWebhookEndpoint(ep); err != nil {
			return err
		}
	}
	for ev, eps := range receivers {
		if err := tx.PutEventBody(ev, bodies[ev], len(eps)); err != nil {
			return err
		}
		for _, ep := range eps {
			d := &ordering.DeliveryRecord{WebhookDelivery: companydocs.WebhookDelivery{EventID: ev, EventType: "order.created",
				OrderID: "ord_1", State: companydocs.DeliveryDelivered, CreatedAt: t0, Attempts: []companydocs.WebhookAttempt{}}}
			if err := tx.PutDelivery(ep, d); err != nil {
				return err
			}
		}
	}
	return nil
}

func gooseProvider(t *testing.T, url string) *goose.Provider {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { sqlDB.Close() })
	fsys, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordBodies reads the body each delivery record carries, as text (its
// last field), keyed "endpoint event".
func recordBodies(t *testing.T, url string) map[string]string {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT endpoint_id, event_id, record::text FROM webhook_deliveries")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var ep, ev string
		var record string
		if err := rows.Scan(&ep, &ev, &record); err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(record, `,"body":`)
		out[fmt.Sprint(ep, " ", ev)] = strings.TrimSuffix(body, "}")
	}
	return out
}
