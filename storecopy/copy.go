package storecopy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"companydocs"
	"companydocs/ordering"
)

// Copy copies every record of from into to: accounts with their key
// hashes and credits, sessions, orders with their history, their
// Idempotency-Keys and open-order slots, document references, the outbox,
// webhook endpoints, deliveries and their schedule, watches, and the ids
// of the payment events applied. It reads from in one View and writes
// to in one Update, so that to gets all of it or nothing. A record to
// holds already fails the copy with ordering.ErrExists. Into a store that
// keeps documents itself (an ordering.SharedStore) it copies each delivered
// PDF too, read with documents and checked against its hash, so that the
// copy refers to no document it lacks; into one that does not, the files
// are the caller's to move.
func Copy(ctx context.Context, from, to ordering.Store, documents ordering.DocumentReader) error {
	return from.View(ctx, func(src ordering.Tx) error {
		return to.Update(ctx, func(dst ordering.Tx) error {
			steps := []func(src, dst ordering.Tx) error{copyAccounts, copyOrders, copyDocuments(ctx, documents), copyEvents, copyWebhooks, copyWatches, copyPaymentEvents}
			for _, step := range steps {
				if err := step(src, dst); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// copyPaymentEvents copies the ids of the payment events applied, with
// when, so that a replay after the copy is still recognised (and pruned
// when its time comes).
func copyPaymentEvents(src, dst ordering.Tx) error {
	return eachPaymentEvent(src, func(e *ordering.AppliedPaymentEvent) error {
		claimed, err := dst.ClaimPaymentEvent(e.Provider, e.EventID, e.AppliedAt)
		if err == nil && !claimed {
			err = ordering.ErrExists
		}
		if err != nil {
			return fmt.Errorf("copy payment event %s %s: %w", e.Provider, e.EventID, err)
		}
		return nil
	})
}

func copyWatches(src, dst ordering.Tx) error {
	return eachWatch(src, func(w *ordering.WatchRecord) error {
		if err := dst.InsertWatch(w); err != nil {
			return fmt.Errorf("copy watch %s: %w", w.ID, err)
		}
		return nil
	})
}

func copyAccounts(src, dst ordering.Tx) error {
	accounts, err := src.Accounts()
	if err != nil {
		return err
	}
	for i := range accounts {
		a := &accounts[i]
		a.Role = a.EffectiveRole() // one stored before roles existed is a client
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

func copySession(src, dst ordering.Tx, h [32]byte) error {
	rec, err := src.Session(h)
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("copy session %x: listed for its account but not stored", h[:4])
	}
	return dst.PutSession(h, rec)
}

func copyOrders(src, dst ordering.Tx) error {
	return eachOrder(src, func(rec *ordering.OrderRecord) error {
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
// readable through an ordering.Tx; the order record holds the refund). The ids of
// the provider events applied are not copied: an event of an order past
// its checkout changes nothing anyway.
func copyRefund(dst ordering.Tx, rec *ordering.OrderRecord) error {
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

// claimed turns a claim that found another holder into ordering.ErrExists.
func claimed(holder string, err error) error {
	if err == nil && holder != "" {
		return fmt.Errorf("held by order %s: %w", holder, ordering.ErrExists)
	}
	return err
}

// copyDocuments copies the document references and, into a store that
// keeps documents itself, each document once.
func copyDocuments(ctx context.Context, read ordering.DocumentReader) func(src, dst ordering.Tx) error {
	return func(src, dst ordering.Tx) error {
		dtx, keepsDocuments := dst.(ordering.DocumentTx)
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
func copyDocument(ctx context.Context, read ordering.DocumentReader, dst ordering.DocumentTx, sha string) error {
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

func checkDocumentHash(ctx context.Context, read ordering.DocumentReader, sha string) error {
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
		return fmt.Errorf("%w: its bytes do not match its SHA-256", ordering.ErrDamaged)
	}
	return nil
}

func copyEvents(src, dst ordering.Tx) error {
	return eachEvent(src, func(e *ordering.Event) error {
		if err := dst.AppendEvent(e); err != nil {
			return fmt.Errorf("copy event %s: %w", e.ID, err)
		}
		return nil
	})
}

// copyWebhooks copies the endpoints, then the body of each event with
// deliveries (once, counting the deliveries that refer to it), then the
// deliveries.
func copyWebhooks(src, dst ordering.Tx) error {
	endpoints, err := src.WebhookEndpoints("")
	if err != nil {
		return err
	}
	deliveries := make([][]ordering.DeliveryRecord, len(endpoints))
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
func copyBodies(src, dst ordering.Tx, deliveries [][]ordering.DeliveryRecord) error {
	refs, first := map[string]int{}, map[string]*ordering.DeliveryRecord{}
	for i := range deliveries {
		for j := range deliveries[i] {
			d := &deliveries[i][j]
			if refs[d.EventID]++; first[d.EventID] == nil || len(d.Body) > 0 {
				first[d.EventID] = d
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(refs)) {
		body, err := ordering.DeliveryBody(src, first[id])
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
func copyDelivery(dst ordering.Tx, endpointID string, d *ordering.DeliveryRecord) error {
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
