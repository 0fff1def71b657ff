package ordering

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"companydocs"
)

// copyPage is how many orders or events a copy reads per call.
const copyPage = 500

// allDeliveries asks RecentDeliveries for every delivery of an endpoint.
const allDeliveries = 1 << 30

// Census counts what a store holds, through the Tx methods alone, so that
// two stores of different kinds compare: the records of each kind and
// every account's balance.
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
func TakeCensus(ctx context.Context, s Store) (Census, error) {
	var c Census
	err := s.View(ctx, func(tx Tx) error {
		c = Census{Balances: map[string]int64{}}
		return c.take(tx)
	})
	return c, err
}

func (c *Census) take(tx Tx) error {
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
	err = eachOrder(tx, func(rec *OrderRecord) error {
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
	if err := eachEvent(tx, func(*Event) error { c.Events++; return nil }); err != nil {
		return err
	}
	if err := c.takeWebhooks(tx); err != nil {
		return err
	}
	if err := eachWatch(tx, func(*WatchRecord) error { c.Watches++; return nil }); err != nil {
		return err
	}
	return eachPaymentEvent(tx, func(*AppliedPaymentEvent) error { c.PaymentEvents++; return nil })
}

// eachPaymentEvent calls fn with every applied payment event id, a page
// at a time.
func eachPaymentEvent(tx Tx, fn func(*AppliedPaymentEvent) error) error {
	return eachPaged(tx.PaymentEvents, func(e *AppliedPaymentEvent) AppliedPaymentEvent { return *e }, fn)
}

// eachPaged calls fn with every record read pages copyPage at a time,
// each page after the cursor of the last record of the one before (the
// zero cursor reads the first); a page shorter than copyPage is the last.
func eachPaged[R, C any](read func(after C, limit int) ([]R, error), cursor func(*R) C, fn func(*R) error) error {
	var after C
	for {
		page, err := read(after, copyPage)
		if err != nil {
			return err
		}
		for i := range page {
			if err := fn(&page[i]); err != nil {
				return err
			}
		}
		if len(page) < copyPage {
			return nil
		}
		after = cursor(&page[len(page)-1])
	}
}

// copyPaymentEvents copies the ids of the payment events applied, with
// when, so that a replay after the copy is still recognised (and pruned
// when its time comes).
func copyPaymentEvents(src, dst Tx) error {
	return eachPaymentEvent(src, func(e *AppliedPaymentEvent) error {
		claimed, err := dst.ClaimPaymentEvent(e.Provider, e.EventID, e.AppliedAt)
		if err == nil && !claimed {
			err = ErrExists
		}
		if err != nil {
			return fmt.Errorf("copy payment event %s %s: %w", e.Provider, e.EventID, err)
		}
		return nil
	})
}

// eachWatch calls fn with every watch in id order, a page at a time.
func eachWatch(tx Tx, fn func(*WatchRecord) error) error {
	return eachPaged(tx.Watches, func(w *WatchRecord) string { return w.ID }, fn)
}

func copyWatches(src, dst Tx) error {
	return eachWatch(src, func(w *WatchRecord) error {
		if err := dst.InsertWatch(w); err != nil {
			return fmt.Errorf("copy watch %s: %w", w.ID, err)
		}
		return nil
	})
}

func (c *Census) takeWebhooks(tx Tx) error {
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
func ownKeys(tx Tx, rec *OrderRecord) (key, slot int, err error) {
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

func slotOf(rec *OrderRecord) OpenSlot {
	o := rec.Order
	return OpenSlot{Account: rec.Account, ProfileID: o.CompanyProfileID, DocumentType: o.DocumentType, PlanID: o.PlanID}
}

// eachOrder calls fn with every order, oldest first.
func eachOrder(tx Tx, fn func(*OrderRecord) error) error {
	after := ""
	for {
		page, err := tx.QueuedOrders("", after, copyPage)
		if err != nil {
			return err
		}
		for _, rec := range page {
			if err := fn(rec); err != nil {
				return err
			}
		}
		if len(page) < copyPage {
			return nil
		}
		after = page[len(page)-1].Order.ID
	}
}

// eachEvent calls fn with every event of the outbox, in id order.
func eachEvent(tx Tx, fn func(*Event) error) error {
	return eachPaged(tx.Events, func(e *Event) string { return e.ID }, fn)
}

// Copy copies every record of from into to: accounts with their key
// hashes and credits, sessions, orders with their history, their
// Idempotency-Keys and open-order slots, document references, the outbox,
// webhook endpoints, deliveries and their schedule, watches, and the ids
// of the payment events applied. It reads from in one
// View and writes to in one Update, so that to gets all of it or nothing.
// A record to holds already fails the copy with ErrExists. Into a store
// that keeps documents itself (a SharedStore) it copies each delivered
// PDF too, read with documents and checked against its hash, so that the
// copy refers to no document it lacks; into one that does not, the files
// are the caller's to move.
func Copy(ctx context.Context, from, to Store, documents DocumentReader) error {
	return from.View(ctx, func(src Tx) error {
		return to.Update(ctx, func(dst Tx) error {
			steps := []func(src, dst Tx) error{copyAccounts, copyOrders, copyDocuments(ctx, documents), copyEvents, copyWebhooks, copyWatches, copyPaymentEvents}
			for _, step := range steps {
				if err := step(src, dst); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// A DocumentReader opens a delivered PDF by its SHA-256 (hex).
type DocumentReader func(ctx context.Context, sha256 string) (io.ReadCloser, error)

func copyAccounts(src, dst Tx) error {
	accounts, err := src.Accounts()
	if err != nil {
		return err
	}
	for i := range accounts {
		a := &accounts[i]
		a.Role = a.role() // one stored before roles existed is a client
		if err := dst.CreateAccount(a); err != nil {
			return fmt.Errorf("copy account %s: %w", a.Name, err)
		}
		n, err := src.CountSessions(a.Name)
		if err != nil {
			return err
		}
		hashes, err := src.OldestSessions(a.Name, n)
		if err != nil {
			return err
		}
		for _, h := range hashes {
			if err := copySession(src, dst, h); err != nil {
				return err
			}
		}
	}
	return nil
}

func copySession(src, dst Tx, h [32]byte) error {
	rec, err := src.Session(h)
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("copy session %x: listed for its account but not stored", h[:4])
	}
	return dst.PutSession(h, rec)
}

func copyOrders(src, dst Tx) error {
	return eachOrder(src, func(rec *OrderRecord) error {
		if err := dst.InsertOrder(rec); err != nil {
			return fmt.Errorf("copy order %s: %w", rec.Order.ID, err)
		}
		key, slot, err := ownKeys(src, rec)
		if err != nil {
			return err
		}
		if key == 1 {
			if err := claimed(dst.ClaimIdempotencyKey(rec.Account, rec.IdempotencyKey, rec.Order.ID)); err != nil {
				return fmt.Errorf("copy the Idempotency-Key of order %s: %w", rec.Order.ID, err)
			}
		}
		if slot == 1 {
			if err := claimed(dst.ClaimOpenOrder(slotOf(rec), rec.Order.ID)); err != nil {
				return fmt.Errorf("copy the open-order slot of order %s: %w", rec.Order.ID, err)
			}
		}
		return copyRefund(dst, rec)
	})
}

// copyRefund schedules the pending refund of an order paid through a
// provider, due when its record says (the schedule itself is not
// readable through a Tx; the order record holds the refund). The ids of
// the provider events applied are not copied: an event of an order past
// its checkout changes nothing anyway.
func copyRefund(dst Tx, rec *OrderRecord) error {
	p := rec.Order.Payment
	if p == nil || p.Refund == nil || p.Refund.Status != companydocs.RefundPending {
		return nil
	}
	at := p.Refund.RequestedAt
	if p.Refund.NextAttemptAt != nil {
		at = *p.Refund.NextAttemptAt
	}
	if err := dst.ScheduleRefund(rec.Order.ID, at); err != nil {
		return fmt.Errorf("copy the refund of order %s: %w", rec.Order.ID, err)
	}
	return nil
}

// claimed turns a claim that found another holder into ErrExists.
func claimed(holder string, err error) error {
	if err == nil && holder != "" {
		return fmt.Errorf("held by order %s: %w", holder, ErrExists)
	}
	return err
}

// copyDocuments copies the document references and, into a store that
// keeps documents itself, each document once.
func copyDocuments(ctx context.Context, read DocumentReader) func(src, dst Tx) error {
	return func(src, dst Tx) error {
		dtx, keepsDocuments := dst.(DocumentTx)
		copied := map[string]bool{}
		return src.DocumentRefs(func(sha, orderID string) error {
			if keepsDocuments && !copied[sha] {
				if err := copyDocument(ctx, read, dtx, sha); err != nil {
					return fmt.Errorf("document %s of order %s: %w", sha, orderID, err)
				}
				copied[sha] = true
			}
			return dst.AddDocumentRef(sha, orderID)
		})
	}
}

// copyDocument reads the document twice, never whole into memory: once
// to check its bytes against its SHA-256, then into the target.
func copyDocument(ctx context.Context, read DocumentReader, dst DocumentTx, sha string) error {
	if read == nil {
		return errors.New("the target keeps documents itself, and nothing reads the source's")
	}
	if err := checkDocumentHash(ctx, read, sha); err != nil {
		return err
	}
	r, err := read(ctx, sha)
	if err != nil {
		return err
	}
	defer r.Close()
	return dst.PutDocument(sha, r)
}

func checkDocumentHash(ctx context.Context, read DocumentReader, sha string) error {
	r, err := read(ctx, sha)
	if err != nil {
		return err
	}
	defer r.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, r); err != nil {
		return err
	}
	if hex.EncodeToString(sum.Sum(nil)) != sha {
		return fmt.Errorf("%w: its bytes do not match its SHA-256", ErrDamaged)
	}
	return nil
}

func copyEvents(src, dst Tx) error {
	return eachEvent(src, func(e *Event) error {
		if err := dst.AppendEvent(e); err != nil {
			return fmt.Errorf("copy event %s: %w", e.ID, err)
		}
		return nil
	})
}

// copyWebhooks copies the endpoints, then the body of each event with
// deliveries (once, counting the deliveries that refer to it), then the
// deliveries.
func copyWebhooks(src, dst Tx) error {
	endpoints, err := src.WebhookEndpoints("")
	if err != nil {
		return err
	}
	deliveries := make([][]DeliveryRecord, len(endpoints))
	for i := range endpoints {
		ep := &endpoints[i]
		if err := dst.InsertWebhookEndpoint(ep); err != nil {
			return fmt.Errorf("copy webhook endpoint %s: %w", ep.ID, err)
		}
		if deliveries[i], err = src.RecentDeliveries(ep.ID, allDeliveries); err != nil {
			return err
		}
	}
	if err := copyBodies(src, dst, deliveries); err != nil {
		return err
	}
	for i := range endpoints {
		for j := range deliveries[i] {
			d := &deliveries[i][j]
			d.Body = nil // stored once, above
			if err := copyDelivery(dst, endpoints[i].ID, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyBodies stores the body of each event the deliveries name, with as
// many references as deliveries name it: the source's stored body, or
// the one an old delivery record carries itself.
func copyBodies(src, dst Tx, deliveries [][]DeliveryRecord) error {
	refs, first := map[string]int{}, map[string]*DeliveryRecord{}
	for i := range deliveries {
		for j := range deliveries[i] {
			d := &deliveries[i][j]
			if refs[d.EventID]++; first[d.EventID] == nil || len(d.Body) > 0 {
				first[d.EventID] = d
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(refs)) {
		body, err := deliveryBody(src, first[id])
		if err != nil {
			return fmt.Errorf("copy webhook body: %w", err)
		}
		if err := dst.PutEventBody(id, body, refs[id]); err != nil {
			return fmt.Errorf("copy the webhook body of event %s: %w", id, err)
		}
	}
	return nil
}

// copyDelivery stores a delivery and, while it is pending, schedules it
// at its next attempt, as the rules did.
func copyDelivery(dst Tx, endpointID string, d *DeliveryRecord) error {
	if err := dst.PutDelivery(endpointID, d); err != nil {
		return fmt.Errorf("copy delivery %s: %w", d.EventID, err)
	}
	if d.State != companydocs.DeliveryPending {
		return nil
	}
	if d.NextAttempt == nil {
		return fmt.Errorf("copy delivery %s to %s: pending without a next attempt", d.EventID, endpointID)
	}
	return dst.ScheduleDelivery(endpointID, d.EventID, *d.NextAttempt)
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
