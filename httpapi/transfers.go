package httpapi

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"

	"companydocs"

	"github.com/gofiber/fiber/v2"
)

// Transfer kinds, the label of the metrics hooks.
const (
	TransferUpload   = "upload"
	TransferDownload = "download"
)

// Refusal reasons of the metrics hooks: the node's bound or the account's.
const (
	RefusedNode    = "node"
	RefusedAccount = "account"
)

// transferRetryAfter is the Retry-After, in seconds, of a transfer refused
// for want of a slot: a slot is held at most the read timeout (uploads) or
// the write timeout (downloads), 10 s by default, and most for far less.
const transferRetryAfter = 5

// transfers bounds the uploads or downloads in flight on this node and,
// when perAccount > 0, per account. A slot is taken before the body is
// read or the document opened and given back when the transfer ends,
// however it ends.
type transfers struct {
	kind     string
	slots    *slots[string]
	onRefuse func(kind, reason string)
}

func newTransfers(kind string, perNode, perAccount int, deps Deps) *transfers {
	var onCount func(int)
	if deps.OnTransfer != nil {
		onCount = func(n int) { deps.OnTransfer(kind, n) }
	}
	return &transfers{kind: kind, slots: newSlots[string](perNode, perAccount, onCount), onRefuse: deps.OnTransferRefused}
}

// acquire takes a slot for account, or answers rate_limited (the
// account's bound) or service_unavailable (the node's), each with
// Retry-After. release gives the slot back; calls after the first do
// nothing.
func (t *transfers) acquire(c *fiber.Ctx, account string) (release func(), err error) {
	switch accountFull, nodeFull := t.slots.take(account, true); {
	case accountFull:
		return nil, t.refuse(c, RefusedAccount, companydocs.Refusal(companydocs.ERATELIMITED,
			"refusal.account_transfers_full", companydocs.Args{"max": t.slots.perKey, "kind": t.kind}))
	case nodeFull:
		return nil, t.refuse(c, RefusedNode, companydocs.Refusal(companydocs.EUNAVAILABLE,
			"refusal.server_transfers_full", companydocs.Args{"max": t.slots.total, "kind": t.kind}))
	}
	var once sync.Once
	return func() { once.Do(func() { t.slots.release(account) }) }, nil
}

func (t *transfers) refuse(c *fiber.Ctx, reason string, err error) error {
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(transferRetryAfter))
	if t.onRefuse != nil {
		t.onRefuse(t.kind, reason)
	}
	return err
}

// releasingReader gives a download's slot back when the HTTP server
// closes the body stream: after the last byte, and also when writing it
// failed (the client went away, or the write timeout passed).
type releasingReader struct {
	io.ReadCloser
	release func()
}

func (r releasingReader) Close() error {
	defer r.release()
	return r.ReadCloser.Close()
}

// requestBody reads a streamed request body, turning a failed read into
// the error the client is answered.
type requestBody struct {
	r io.Reader
}

func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	switch {
	case err == nil || errors.Is(err, io.EOF):
	case errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		err = companydocs.Refusal(companydocs.ETIMEOUT, "refusal.body_timeout", nil)
	case err != nil:
		err = companydocs.Refusal(companydocs.EVALIDATION, "refusal.body_unreadable", nil)
	}
	return n, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// streamBody hands the upload route a requestBody (Fiber's c.Body would
// read the whole body into memory), cut at the Content-Length, and closes
// the connection after the answer: a body refused before it was read (no
// session, not an operator, too large, no slot) or cut off would be read
// as the next request, and the prefetch may have read past a short one
// (uploadPrefetch). The lingering close lets the client read the answer.
func streamBody(c *fiber.Ctx) error {
	var r io.Reader = eofReader{}
	if stream := c.Context().RequestBodyStream(); stream != nil {
		r = stream
		if n := c.Request().Header.ContentLength(); n >= 0 {
			r = io.LimitReader(stream, int64(n))
		}
	}
	c.Locals(bodyKey{}, &requestBody{r: r})
	c.Context().SetConnectionClose()
	return c.Next()
}

type bodyKey struct{}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
