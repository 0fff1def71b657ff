package storecopy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"companydocs"
	"companydocs/ordering"
)

// Census counts what a store holds, through the ordering.Tx methods
// alone, so that two stores of different kinds compare: the records of
// each kind and every account's balance.
type Census struct {
	Accounts, Sessions, Orders, IdempotencyKeys, OpenOrders int
	DocumentRefs, Events, Endpoints, Deliveries, Scheduled  int
	Watches, PaymentEvents                                  int
	// Balances maps each account to its credits; Credits is their sum.
	Balances map[string]int64
	Credits  int64
}

// Empty reports whether the store holds no account and no order.
func (c Census) Empty() bool { return c.Accounts == 0 && c.Orders == 0 }

// TakeCensus counts the store's records in one read transaction.
func TakeCensus(ctx context.Context, s ordering.Store) (Census, error) {
	var c Census
	err := s.View(ctx, func(tx ordering.Tx) error {
		c = Census{Balances: map[string]int64{}}
		return c.take(tx)
	})
	return c, err
}

func (c *Census) take(tx ordering.Tx) error {
	accounts, err := tx.Accounts()
	if err != nil {
		return err
	}
	for _, a := range accounts {
		c.Accounts++
		c.Balances[a.Name] = a.Credits
		c.Credits += a.Credits
		n, err := tx.CountSessions(a.Name)
		if err != nil {
			return err
		}
		c.Sessions += n
	}
	err = eachOrder(tx, func(rec *ordering.OrderRecord) error {
		c.Orders++
		key, slot, err := ownKeys(tx, rec)
		c.IdempotencyKeys += key
		c.OpenOrders += slot
		return err
	})
	if err != nil {
		return err
	}
	if err := tx.DocumentRefs(func(string, string) error { c.DocumentRefs++; return nil }); err != nil {
		return err
	}
	if err := eachEvent(tx, func(*ordering.Event) error { c.Events++; return nil }); err != nil {
		return err
	}
	if err := c.takeWebhooks(tx); err != nil {
		return err
	}
	if err := eachWatch(tx, func(*ordering.WatchRecord) error { c.Watches++; return nil }); err != nil {
		return err
	}
	return eachPaymentEvent(tx, func(*ordering.AppliedPaymentEvent) error { c.PaymentEvents++; return nil })
}

func (c *Census) takeWebhooks(tx ordering.Tx) error {
	endpoints, err := tx.WebhookEndpoints("")
	if err != nil {
		return err
	}
	c.Endpoints = len(endpoints)
	for _, ep := range endpoints {
		list, err := tx.RecentDeliveries(ep.ID, allDeliveries)
		if err != nil {
			return err
		}
		c.Deliveries += len(list)
	}
	c.Scheduled, err = tx.CountScheduledDeliveries()
	return err
}

// ownKeys reports whether the order holds its Idempotency-Key and its
// open-order slot (1 or 0 each).
func ownKeys(tx ordering.Tx, rec *ordering.OrderRecord) (key, slot int, err error) {
	if rec.IdempotencyKey != "" {
		holder, err := tx.IdempotentOrder(rec.Account, rec.IdempotencyKey)
		if err != nil {
			return 0, 0, err
		}
		if holder == rec.Order.ID {
			key = 1
		}
	}
	if !companydocs.TerminalStatus(rec.Order.Status) {
		holder, err := tx.OpenOrder(slotOf(rec))
		if err != nil {
			return 0, 0, err
		}
		if holder == rec.Order.ID {
			slot = 1
		}
	}
	return key, slot, nil
}

func slotOf(rec *ordering.OrderRecord) ordering.OpenSlot {
	o := rec.Order
	return ordering.OpenSlot{Account: rec.Account, ProfileID: o.CompanyProfileID, DocumentType: o.DocumentType, PlanID: o.PlanID}
}

// Added returns what before plus the copied census c makes: what the target
// of a Copy must hold afterwards.
func (c Census) Added(before Census) Census {
	sum := Census{
		Accounts: before.Accounts + c.Accounts, Sessions: before.Sessions + c.Sessions, Orders: before.Orders + c.Orders,
		IdempotencyKeys: before.IdempotencyKeys + c.IdempotencyKeys, OpenOrders: before.OpenOrders + c.OpenOrders,
		DocumentRefs: before.DocumentRefs + c.DocumentRefs, Events: before.Events + c.Events, Endpoints: before.Endpoints + c.Endpoints,
		Deliveries: before.Deliveries + c.Deliveries, Scheduled: before.Scheduled + c.Scheduled, Watches: before.Watches + c.Watches,
		PaymentEvents: before.PaymentEvents + c.PaymentEvents,
		Balances:      maps.Clone(before.Balances), Credits: before.Credits + c.Credits,
	}
	if sum.Balances == nil {
		sum.Balances = map[string]int64{}
	}
	maps.Copy(sum.Balances, c.Balances)
	return sum
}

// Differences lists, one sentence each, where got differs from c: counts
// per kind of record, each account's balance, the sum of balances.
func (c Census) Differences(got Census) []string {
	var out []string
	for _, f := range []struct {
		what      string
		want, got int
	}{
		{"accounts", c.Accounts, got.Accounts}, {"sessions", c.Sessions, got.Sessions}, {"orders", c.Orders, got.Orders},
		{"Idempotency-Keys", c.IdempotencyKeys, got.IdempotencyKeys}, {"open-order slots", c.OpenOrders, got.OpenOrders},
		{"document references", c.DocumentRefs, got.DocumentRefs}, {"outbox events", c.Events, got.Events},
		{"webhook endpoints", c.Endpoints, got.Endpoints}, {"webhook deliveries", c.Deliveries, got.Deliveries},
		{"scheduled deliveries", c.Scheduled, got.Scheduled}, {"watches", c.Watches, got.Watches},
		{"applied payment events", c.PaymentEvents, got.PaymentEvents},
	} {
		if f.want != f.got {
			out = append(out, fmt.Sprintf("%d %s, want %d", f.got, f.what, f.want))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Balances)) {
		if b, ok := got.Balances[name]; !ok || b != c.Balances[name] {
			out = append(out, fmt.Sprintf("account %s has %d credits (present: %v), want %d", name, b, ok, c.Balances[name]))
		}
	}
	if c.Credits != got.Credits {
		out = append(out, fmt.Sprintf("the balances add up to %d credits, want %d", got.Credits, c.Credits))
	}
	return out
}

// String is the census in one line, for a summary.
func (c Census) String() string {
	return fmt.Sprintf("%d accounts (%d credits in all), %d sessions, %d orders, %d Idempotency-Keys, %d open-order slots, "+
		"%d document references, %d outbox events, %d webhook endpoints, %d deliveries (%d scheduled), %d watches, %d applied payment events",
		c.Accounts, c.Credits, c.Sessions, c.Orders, c.IdempotencyKeys, c.OpenOrders,
		c.DocumentRefs, c.Events, c.Endpoints, c.Deliveries, c.Scheduled, c.Watches, c.PaymentEvents)
}

// errCopyMismatch wraps the differences a verification found.
var errCopyMismatch = errors.New("the copy does not match its source")

// Verify compares the target's census with want and fails, listing the
// differences, when they do not match.
func Verify(want, got Census) error {
	if diff := want.Differences(got); len(diff) > 0 {
		return fmt.Errorf("%w: %s", errCopyMismatch, strings.Join(diff, "; "))
	}
	return nil
}
