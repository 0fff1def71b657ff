package sheet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"companydocs/resolver"
)

// pipeline reads the rows of a sheet, resolves them in batches on its
// workers and writes them in input order. At most about three batches
// per worker are in memory at once, whatever the input's length, and a
// batch ends at batchSize rows or maxBatchBytes of cells, whichever
// comes first, so long rows do not make batches large.
type pipeline struct {
	sheet              *sheetReader
	cols               sheetColumns
	req                resolver.Request
	res                batchResolver
	skip               int    // rows a resumed output holds already
	lang               string // of the refusals of rows over a cap
	workers, batchSize int
	progress           *rowProgress
}

// maxBatchBytes ends a batch before batchSize rows when its cells hold
// this many bytes.
const maxBatchBytes = 1 << 20

// rowBatch is a run of consecutive rows and, once done is closed, their
// outcomes or the error that stops the run. A row over a cap has its
// refusal as its outcome from the start and no search: reqs are the
// searches of the other rows, at their positions in rows.
type rowBatch struct {
	rows  [][]string
	outs  []rowOutcome
	reqs  []resolver.Request
	at    []int
	bytes int
	err   error
	done  chan struct{}
}

func newRowBatch(capacity int) *rowBatch {
	return &rowBatch{rows: make([][]string, 0, capacity), outs: make([]rowOutcome, 0, capacity),
		reqs: make([]resolver.Request, 0, capacity), at: make([]int, 0, capacity), done: make(chan struct{})}
}

// add appends a row and its search.
func (b *rowBatch) add(row []string, req resolver.Request) {
	b.at = append(b.at, len(b.rows))
	b.reqs = append(b.reqs, req)
	b.rows = append(b.rows, row)
	b.outs = append(b.outs, rowOutcome{})
	for _, cell := range row {
		b.bytes += len(cell)
	}
}

// refuse appends a row over a cap: empty cells, and its refusal in lang.
func (b *rowBatch) refuse(width int, r *refusedRow, lang string) {
	text, _ := r.refusal.MessageIn(lang)
	b.rows = append(b.rows, make([]string, width))
	b.outs = append(b.outs, rowOutcome{errCode: r.refusal.Code, errText: text})
}

// resolve resolves the batch's searches, if it has any.
func (b *rowBatch) resolve(ctx context.Context, res batchResolver) error {
	if len(b.reqs) == 0 {
		return nil
	}
	outs, err := res.resolve(ctx, b.reqs)
	if err != nil {
		return err
	}
	for i, out := range outs {
		b.outs[b.at[i]] = out
	}
	return nil
}

func (p *pipeline) run(ctx context.Context, out *sheetWriter) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// ordered holds the batches in input order for the writer; work hands
	// the same batches to the workers.
	ordered := make(chan *rowBatch, 2*p.workers)
	work := make(chan *rowBatch)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(ordered)
		defer close(work)
		p.read(ctx, ordered, work)
	})
	for range p.workers {
		wg.Go(func() {
			for b := range work {
				b.err = b.resolve(ctx, p.res)
				close(b.done)
			}
		})
	}
	err := p.write(ctx, ordered, out)
	cancel()
	wg.Wait()
	return err
}

// read sends the rows in batches, after skipping those a resumed output
// holds; an error travels as a batch of its own.
func (p *pipeline) read(ctx context.Context, ordered, work chan<- *rowBatch) {
	send := func(b *rowBatch) bool { return sendBatch(ctx, b, ordered, work) }
	if err := p.skipDone(); err != nil {
		send(&rowBatch{err: err, done: make(chan struct{})})
		return
	}
	b := newRowBatch(p.batchSize)
	for {
		row, err := p.sheet.next()
		var refused *refusedRow
		switch {
		case err == io.EOF:
			if len(b.rows) > 0 {
				send(b)
			}
			return
		case errors.As(err, &refused):
			b.refuse(len(p.sheet.header), refused, p.lang)
		case err != nil:
			if len(b.rows) > 0 && !send(b) {
				return
			}
			send(&rowBatch{err: err, done: make(chan struct{})})
			return
		default:
			b.add(row, p.request(row))
		}
		if len(b.rows) == p.batchSize || b.bytes >= maxBatchBytes {
			if !send(b) {
				return
			}
			b = newRowBatch(p.batchSize)
		}
	}
}

// sendBatch puts b in the writer's order, then, unless it carries an
// error, to the workers; it reports whether reading goes on.
func sendBatch(ctx context.Context, b *rowBatch, ordered, work chan<- *rowBatch) bool {
	select {
	case ordered <- b:
	case <-ctx.Done():
		return false
	}
	if b.err != nil {
		close(b.done)
		return false
	}
	select {
	case work <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

// skipDone reads past the rows a resumed output holds; a row refused
// over a cap has its line in the output too.
func (p *pipeline) skipDone() error {
	var refused *refusedRow
	for i := range p.skip {
		if _, err := p.sheet.next(); err == io.EOF {
			return fmt.Errorf("--resume: the output holds %d rows but the input only %d: it was written for another input", p.skip, i)
		} else if err != nil && !errors.As(err, &refused) {
			return err
		}
	}
	return nil
}

// request is the search of one row: the clue and its property columns.
func (p *pipeline) request(row []string) resolver.Request {
	req := p.req
	req.Query = strings.TrimSpace(row[p.cols.query])
	for i, col := range p.cols.properties {
		if col >= 0 {
			*req.Properties.Field(PropertyColumns[i].ID) = strings.TrimSpace(row[col])
		}
	}
	return req
}

// write writes the batches in input order as each is done, flushing
// after each so that a killed run loses only the rows in flight.
func (p *pipeline) write(ctx context.Context, ordered <-chan *rowBatch, out *sheetWriter) error {
	for b := range ordered {
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if b.err != nil {
			return b.err
		}
		for i, row := range b.rows {
			if err := out.writeRow(row, b.outs[i]); err != nil {
				return err
			}
		}
		if err := out.flush(); err != nil {
			return err
		}
		p.progress.add(b.outs)
	}
	return ctx.Err()
}
