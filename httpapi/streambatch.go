package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"companydocs"
	"companydocs/resolver"
)

// A search batch's answer is written as its items are resolved, in the
// order of the queries, so that a node's memory follows the items in
// flight, not the batches it answers: at most batchWindow items of a
// batch are resolved and not yet written at once. The answer's status
// (200) goes out with its first item; what the service fails later is
// said in the item's place (service_unavailable), and the charges close
// the answer.

// batchWindow bounds the items of one batch resolved ahead of the one
// being written.
const batchWindow = 8

// batchJob is what the answer of a batch needs once its handler has
// returned: the queries, the items refused while decoding, the record of
// its Idempotency-Key, the search budget it spends (the account's or the
// client address's) and the language it is for, and the release of its
// slots.
type batchJob struct {
	reqs    []resolver.Request
	errs    []error
	keyed   *chargedBatch
	budget  searchBudget
	lang    string
	release func()
}

// resolvedItem is one item of a batch's answer, encoded.
type resolvedItem struct {
	encoded []byte
	outcome string // "answered", or the item's error code
	charged bool
}

// batchTally adds up what a batch's answer held and charged.
type batchTally struct {
	charged    []int // positions
	notCharged []int
	outcomes   map[string]int
}

// batchAnswerTimeout bounds the writing of a batch's answer, which starts
// as the batch is resolved: the batch's deadline and the time to write
// the rest.
func (s *Server) batchAnswerTimeout() time.Duration {
	return s.config.BatchTimeout + s.config.WriteTimeout
}

// writeBatch resolves job's queries and writes the answer to w, item by
// item; it stops resolving when the client is gone. Then it charges the
// client for the items charged and gives the slots back.
func (h batchHandlers) writeBatch(w *bufio.Writer, job batchJob) {
	s := h.s
	defer job.release()
	ctx, cancel := context.WithTimeout(context.Background(), s.config.BatchTimeout)
	defer cancel()
	gone := make(chan struct{})
	ready, window := h.resolveInOrder(ctx, job, gone)
	tally := batchTally{notCharged: []int{}, outcomes: map[string]int{}}
	_, err := w.WriteString(`{"results":[`)
	for i := 0; i < len(job.reqs) && err == nil; i++ {
		item := <-ready[i]
		<-window
		if err = writeItem(w, i, item.encoded); err == nil {
			tally.add(i, item) // an item the client never got is not charged
		}
	}
	if err == nil {
		err = tally.writeCharges(w)
	}
	if err != nil {
		close(gone) // the client went away: resolve no more
		s.logger.Debug("search batch answer cut off", "queries", len(job.reqs), "error", err)
	}
	s.charged.markPositions(job.keyed, tally.charged)
	job.budget.charge(len(tally.charged))
	s.Metrics.ObserveBatch(len(job.reqs), tally.outcomes, len(tally.charged))
}

// writeItem writes the i-th item of the results, flushing every
// batchWindow items so that the client reads as the batch is resolved.
func writeItem(w *bufio.Writer, i int, encoded []byte) error {
	if i > 0 {
		if err := w.WriteByte(','); err != nil {
			return err
		}
	}
	if _, err := w.Write(encoded); err != nil {
		return err
	}
	if i%batchWindow == batchWindow-1 {
		return w.Flush()
	}
	return nil
}

func (t *batchTally) add(i int, item resolvedItem) {
	if item.charged {
		t.charged = append(t.charged, i)
	} else {
		t.notCharged = append(t.notCharged, i)
	}
	t.outcomes[item.outcome]++
}

// writeCharges closes the answer with what it charged.
func (t *batchTally) writeCharges(w *bufio.Writer) error {
	notCharged, _ := json.Marshal(t.notCharged)
	_, err := w.WriteString(`],"charged":` + strconv.Itoa(len(t.charged)) + `,"not_charged":` + string(notCharged) + "}")
	return err
}

// resolveInOrder resolves job's queries on as many workers as batch
// queries run at once (batchSlots), each item into its channel of ready;
// window holds a token for every item taken and not yet written, at most
// batchWindow. It stops taking items once gone is closed.
func (h batchHandlers) resolveInOrder(ctx context.Context, job batchJob, gone <-chan struct{}) (ready []chan resolvedItem, window chan struct{}) {
	s := h.s
	ready = make([]chan resolvedItem, len(job.reqs))
	for i := range ready {
		ready[i] = make(chan resolvedItem, 1)
	}
	window = make(chan struct{}, batchWindow)
	next := make(chan int)
	for range min(cap(s.batchSlots), len(job.reqs)) {
		go func() {
			for i := range next {
				ready[i] <- h.resolveItem(ctx, job, i)
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range job.reqs {
			select {
			case window <- struct{}{}:
			case <-gone:
				return
			}
			select {
			case next <- i:
			case <-gone:
				return
			}
		}
	}()
	return ready, window
}

// resolveItem resolves and encodes the i-th query of job, its error said
// in job's language; an item the service failed, or charged before under
// the batch's Idempotency-Key, is not charged.
func (h batchHandlers) resolveItem(ctx context.Context, job batchJob, i int) (out resolvedItem) {
	s := h.s
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("panic in a batch search", "panic", r)
			out = encodeItem(itemError(companydocs.Refusal(companydocs.EINTERNAL, companydocs.KeyInternal, nil)), job.lang)
		}
	}()
	item := s.searchItem(ctx, job.reqs[i], job.errs[i])
	if item.Result != nil {
		item.Result = item.Result.SaidIn(job.lang, job.reqs[i].Query)
	}
	out = encodeItem(item, job.lang)
	out.charged = !serviceFault(out.outcome) && (job.keyed == nil || !job.keyed.charged[i])
	return out
}

// encodeItem encodes an item of a batch, its error said in lang.
func encodeItem(item BatchItem, lang string) resolvedItem {
	outcome := "answered"
	if item.Error != nil {
		outcome = item.Error.Code
		item.Error.Message, _ = companydocs.ErrorMessageIn(item.Error.err, lang)
	}
	encoded, err := json.Marshal(item)
	if err != nil && item.Result != nil {
		return encodeItem(itemError(fmt.Errorf("encode a batch item: %w", err)), lang) // internal: its text is not shown
	}
	return resolvedItem{encoded: encoded, outcome: outcome}
}
