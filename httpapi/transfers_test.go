package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/syncbuf"
)

// tokenSessions authenticates "tok-<account>" as <account>.
type tokenSessions struct{ Sessions }

func (tokenSessions) Authenticate(_ context.Context, token string) (string, error) {
	if account, ok := strings.CutPrefix(token, "tok-"); ok {
		return account, nil
	}
	return "", &companydocs.Error{Code: companydocs.EUNAUTHORIZED, Message: "unknown token"}
}

// bigDocuments serves every order's document as size zero bytes and
// counts the readers that are open.
type bigDocuments struct {
	Orders
	size int
	open atomic.Int32
}

func (d *bigDocuments) Document(_ context.Context, account, id string) (*companydocs.Order, io.ReadCloser, error) {
	d.open.Add(1)
	o := &companydocs.Order{ID: id, Account: account, Document: &companydocs.OrderDocument{SHA256: "00", Size: int64(d.size)}}
	return o, &countedReader{Reader: io.LimitReader(zeros{}, int64(d.size)), open: &d.open}, nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type countedReader struct {
	io.Reader
	open *atomic.Int32
}

func (r *countedReader) Close() error {
	r.open.Add(-1)
	return nil
}

// serveTest serves s on a loopback port until the test ends.
func serveTest(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// rawRequest writes raw and reads the answer's head.
func rawRequest(t *testing.T, addr, raw string) (net.Conn, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 1024), nil)
	if err != nil {
		t.Fatal(err)
	}
	return conn, resp
}

func downloadRequest(account string) string {
	return fmt.Sprintf("GET /api/v1/documents/orders/ord_1/document HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-%s\r\n\r\n", account)
}

// waitFor polls cond until it holds or 5 s passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s: %s", what)
		}
	}
}

// TestDownloadsAreBoundedAndReleased: an account with as many downloads
// in flight as DownloadsPerAccount gets 429 with Retry-After, another
// account goes on until the node's DownloadsInFlight, then 503 with
// Retry-After; a client that goes away mid-stream gives its slot back
// (the reader is closed), and so does one that reads to the end. The
// request log is on, as it is by default: it logs a download's size
// without reading the stream.
func TestDownloadsAreBoundedAndReleased(t *testing.T) {
	docs := &bigDocuments{size: 64 << 20}
	var inFlight atomic.Int32
	var refusedAccount, refusedNode atomic.Int32
	var logs syncbuf.Buffer
	cfg := DefaultConfig()
	cfg.DownloadsPerAccount, cfg.DownloadsInFlight = 1, 2
	s := newTestServerWith(t, cfg, Deps{Sessions: tokenSessions{}, Orders: docs, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		OnTransfer: func(kind string, n int) { inFlight.Store(int32(n)) },
		OnTransferRefused: func(kind, reason string) {
			if kind == TransferDownload && reason == RefusedAccount {
				refusedAccount.Add(1)
			} else if kind == TransferDownload && reason == RefusedNode {
				refusedNode.Add(1)
			}
		}})
	addr := serveTest(t, s)

	first, resp := rawRequest(t, addr, downloadRequest("a"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first download: %d", resp.StatusCode)
	}
	_, resp = rawRequest(t, addr, downloadRequest("a"))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second download of the account: %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	_, resp = rawRequest(t, addr, downloadRequest("b"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("another account's download: %d", resp.StatusCode)
	}
	_, resp = rawRequest(t, addr, downloadRequest("c"))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a download over the node's bound: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if inFlight.Load() != 2 || refusedAccount.Load() != 1 || refusedNode.Load() != 1 {
		t.Errorf("hooks: %d in flight, %d refused by the account's bound and %d by the node's; want 2, 1, 1", inFlight.Load(), refusedAccount.Load(), refusedNode.Load())
	}
	if want := fmt.Sprintf(`"bytes":%d,`, docs.size); !strings.Contains(logs.String(), want) {
		t.Errorf("no download logged with %s:\n%s", want, logs.String())
	}
	first.Close() // gone mid-stream: 64 MiB do not fit in the socket buffers
	waitFor(t, "the abandoned download's slot is back", func() bool { return inFlight.Load() == 1 && docs.open.Load() == 1 })
	conn, resp := rawRequest(t, addr, downloadRequest("a"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the account's download after the first went away: %d", resp.StatusCode)
	}
	if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != int64(docs.size) {
		t.Fatalf("read %d bytes (%v), want %d", n, err, docs.size)
	}
	conn.Close()
	waitFor(t, "the finished download's slot is back", func() bool { return inFlight.Load() == 1 && docs.open.Load() == 1 })
}

// TestAbortedRequestsAreLoggedWithTheirLine: a request whose body stops
// arriving before any handler runs (the HTTP server times out reading its
// first bytes and resets it) and a body over the limit are logged with
// their real method and path, not as "GET /".
func TestAbortedRequestsAreLoggedWithTheirLine(t *testing.T) {
	var logs syncbuf.Buffer
	cfg := DefaultConfig()
	cfg.ReadTimeout = 300 * time.Millisecond
	s := newTestServerWith(t, cfg, Deps{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	addr := serveTest(t, s)

	_, resp := rawRequest(t, addr, "POST /api/v1/documents/orders/preview HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\"")
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a body that stops: %d, want 408", resp.StatusCode)
	}
	_, resp = rawRequest(t, addr, "POST /api/v1/documents/companies/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat(" ", 9000))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: %d, want 413", resp.StatusCode)
	}
	want := map[string]string{"/api/v1/documents/orders/preview": "POST 408", "/api/v1/documents/companies/search": "POST 413"}
	got := map[string]string{}
	waitFor(t, "both requests are logged", func() bool {
		for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
			var e struct {
				Msg, Method, Path string
				Status            int
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "request" {
				got[e.Path] = fmt.Sprintf("%s %d", e.Method, e.Status)
			}
		}
		return len(got) >= len(want)
	})
	for path, line := range want {
		if got[path] != line {
			t.Errorf("log of %s: %q, want %q (all: %v)", path, got[path], line, got)
		}
	}
}
