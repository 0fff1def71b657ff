package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/time/rate"
)

// copyBuffer is the one buffer a transfer moves bytes through: the memory
// a download or an upload holds, whatever the size of the file.
const copyBuffer = 256 << 10

// pump copies src to dst through buf and calls after with every chunk's
// length (the watchdog, the rate limit, progress); it returns the bytes
// copied. io.Copy is not used: blob.Writer.ReadFrom would bring its own
// buffer of 1 MiB.
func pump(dst io.Writer, src io.Reader, buf []byte, after func(n int) error) (int64, error) {
	var total int64
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return total, err
			}
			total += int64(n)
			if err := after(n); err != nil {
				return total, err
			}
		}
		if rerr == io.EOF {
			return total, nil
		} else if rerr != nil {
			return total, rerr
		}
	}
}

// A watchdog cancels a transfer's context when no chunk has moved for
// idle.
type watchdog struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	idle   time.Duration
}

// watch returns a context that the watchdog cancels when touch is not
// called for s.idle.
func (s *Store) watch(ctx context.Context) (context.Context, *watchdog) {
	wctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{ctx: wctx, cancel: cancel, idle: s.idle}
	w.timer = time.AfterFunc(s.idle, func() {
		cancel(fmt.Errorf("no progress for %s", s.idle))
	})
	return wctx, w
}

// touch says a chunk has moved; it fails once the context is done, so that
// a copy stops at the next chunk even where the driver does not watch it.
func (w *watchdog) touch() error {
	w.timer.Reset(w.idle)
	return context.Cause(w.ctx)
}

// paused runs wait, the transfer's own rate limit holding it back, with
// the watchdog stopped: the store is not silent while the caller waits,
// and a pause of one buffer at a low rate may be longer than the idle
// bound.
func (w *watchdog) paused(wait func() error) error {
	w.timer.Stop()
	err := wait()
	if terr := w.touch(); err == nil {
		err = terr
	}
	return err
}

func (w *watchdog) stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// cause adds to err why the watchdog's context ended, if it did: a driver
// reports only "context canceled".
func (w *watchdog) cause(err error) error {
	if c := context.Cause(w.ctx); c != nil && !errors.Is(err, c) {
		return fmt.Errorf("%w: %w", c, err)
	}
	return err
}

// A transfer is the state of one Download: its buffer, its rate limit and
// its progress.
type transfer struct {
	buf         []byte
	limit       *rate.Limiter // nil: unlimited
	done, total int64
	progress    func(done, total int64)
}

// newTransfer limits reads to bytesPerSecond when it is positive: a token
// bucket over the bytes read with a burst of one buffer, the most one read
// takes.
func newTransfer(bytesPerSecond int64, progress func(done, total int64)) *transfer {
	t := &transfer{buf: make([]byte, copyBuffer), progress: progress}
	if bytesPerSecond > 0 {
		t.limit = rate.NewLimiter(rate.Limit(bytesPerSecond), copyBuffer)
	}
	return t
}

// add counts n bytes read, tells progress, and waits until the rate limit
// allows them: the tokens are taken after the read, for the bytes that
// actually came.
func (t *transfer) add(ctx context.Context, n int) error {
	t.done += int64(n)
	if t.progress != nil {
		t.progress(t.done, t.total)
	}
	if t.limit == nil {
		return nil
	}
	return t.limit.WaitN(ctx, n)
}
