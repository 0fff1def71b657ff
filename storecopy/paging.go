package storecopy

import "companydocs/ordering"

// copyPage is how many orders or events a copy reads per call.
const copyPage = 500

// allDeliveries asks RecentDeliveries for every delivery of an endpoint.
const allDeliveries = 1 << 30

// eachPaymentEvent calls fn with every applied payment event id, a page
// at a time.
func eachPaymentEvent(tx ordering.Tx, fn func(*ordering.AppliedPaymentEvent) error) error {
	return eachPaged(tx.PaymentEvents, func(e *ordering.AppliedPaymentEvent) ordering.AppliedPaymentEvent { return *e }, fn)
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

// eachWatch calls fn with every watch in id order, a page at a time.
func eachWatch(tx ordering.Tx, fn func(*ordering.WatchRecord) error) error {
	return eachPaged(tx.Watches, func(w *ordering.WatchRecord) string { return w.ID }, fn)
}

// eachOrder calls fn with every order, oldest first.
func eachOrder(tx ordering.Tx, fn func(*ordering.OrderRecord) error) error {
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
func eachEvent(tx ordering.Tx, fn func(*ordering.Event) error) error {
	return eachPaged(tx.Events, func(e *ordering.Event) string { return e.ID }, fn)
}
