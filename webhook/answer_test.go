package webhook

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/rawhttp"
)

// rawReceiver listens on 127.0.0.1 and answers every request with
// answer, which writes until the connection fails or ctx ends (at the
// end of the test); the request's body is read and thrown away
// meanwhile. It returns the receiver's URL.
func rawReceiver(t *testing.T, answer func(ctx context.Context, conn net.Conn) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var conns sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		ln.Close()
		conns.Wait()
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(30 * time.Second)) // a bound on the test, not an assertion
				if rawhttp.ReadRequestHead(conn) {
					go io.Copy(io.Discard, conn) // the body
					answer(ctx, conn)
				}
			})
		}
	}()
	return "http://" + ln.Addr().String() + "/hook"
}

// trickle writes s one byte every interval.
func trickle(ctx context.Context, w io.Writer, s string, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := range len(s) {
		if _, err := w.Write([]byte{s[i]}); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// endless repeats line until writing fails or ctx ends, and returns how
// many bytes were written.
func endless(ctx context.Context, w io.Writer, line func(i int) string) int {
	n := 0
	for i := 0; ctx.Err() == nil; i++ {
		m, err := io.WriteString(w, line(i))
		n += m
		if err != nil {
			break
		}
	}
	return n
}

var kib = strings.Repeat("x", 1024)

// TestEndlessHeadersAreCutOff: a receiver that answers with endless
// header lines makes a failed attempt, retried, that says the headers
// passed maxResponseHeader; the connection is closed after a few KiB,
// where Go's default would read 10 MB.
func TestEndlessHeadersAreCutOff(t *testing.T) {
	written := make(chan int, 1)
	url := rawReceiver(t, func(ctx context.Context, conn net.Conn) error {
		conn.(*net.TCPConn).SetWriteBuffer(4 << 10) // so that what was written is about what was read
		io.WriteString(conn, "HTTP/1.1 200 OK\r\n")
		written <- endless(ctx, conn, func(i int) string { return "X-Pad-" + strconv.Itoa(i) + ": " + kib + "\r\n" })
		return nil
	})
	r := attemptOnce(t, Policy{AllowHTTP: true, AllowPrivate: true}, url)
	want := fmt.Sprintf("headers were longer than %d bytes", maxResponseHeader)
	if r.State != companydocs.DeliveryPending || r.NextAttempt.IsZero() || r.Attempt.StatusCode != 0 || !strings.Contains(r.Attempt.Error, want) {
		t.Errorf("endless headers: %+v, want a retried attempt whose error says %q", r, want)
	}
	// The kernel's buffers on both ends hold what was written and not
	// read: far less than a MiB, far more than the cap.
	n := <-written
	t.Logf("the receiver wrote %d bytes of headers before the connection closed", n)
	if n > 1<<20 {
		t.Errorf("the receiver wrote %d bytes of headers before the connection closed", n)
	}
	if maxResponseHeader > 8<<10 {
		t.Errorf("maxResponseHeader is %d bytes, more than a receiver's answer needs", maxResponseHeader)
	}
}

// TestHeadersWithinTheCapAreRead: an answer with a few hundred bytes of
// headers is delivered, so the cap does not refuse ordinary receivers.
func TestHeadersWithinTheCapAreRead(t *testing.T) {
	url := rawReceiver(t, func(_ context.Context, conn net.Conn) error {
		_, err := io.WriteString(conn, "HTTP/1.1 204 No Content\r\nServer: receiver\r\nX-Request-Id: "+kib[:500]+"\r\n\r\n")
		return err
	})
	if r := attemptOnce(t, Policy{AllowHTTP: true, AllowPrivate: true}, url); r.State != companydocs.DeliveryDelivered || r.Attempt.StatusCode != 204 {
		t.Errorf("an ordinary answer: %+v", r)
	}
}

// TestTricklingHeadersEndAtTheTimeout: a receiver sending its headers a
// byte at a time holds the attempt no longer than the timeout.
func TestTricklingHeadersEndAtTheTimeout(t *testing.T) {
	url := rawReceiver(t, func(ctx context.Context, conn net.Conn) error {
		return trickle(ctx, conn, "HTTP/1.1 200 OK\r\nX-Slow: "+kib+"\r\n\r\n", 50*time.Millisecond)
	})
	began := time.Now()
	r := attemptWithin(t, Policy{AllowHTTP: true, AllowPrivate: true}, url, time.Second)
	took := time.Since(began)
	if r.State != companydocs.DeliveryPending || !strings.Contains(r.Attempt.Error, "no answer within the timeout") || took > 10*time.Second {
		t.Errorf("trickled headers: %+v after %v, want a timed-out attempt", r, took)
	}
}

// TestTricklingBodyEndsAtTheTimeout: the deadline covers the body too,
// so a receiver that answers 200 and then trickles a long body holds
// the attempt no longer than the timeout (the status has come: it is
// delivered).
func TestTricklingBodyEndsAtTheTimeout(t *testing.T) {
	url := rawReceiver(t, func(ctx context.Context, conn net.Conn) error {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
		return trickle(ctx, conn, strings.Repeat("x", 100000), 50*time.Millisecond)
	})
	began := time.Now()
	r := attemptWithin(t, Policy{AllowHTTP: true, AllowPrivate: true}, url, time.Second)
	if took := time.Since(began); r.State != companydocs.DeliveryDelivered || took > 10*time.Second {
		t.Errorf("trickled body: %+v after %v, want delivered at the one-second timeout", r, took)
	}
}

// TestLongBodyIsReadToTheCap: of an endless body, maxResponseRead bytes
// are read, and an attempt on such a receiver ends without waiting for
// the timeout.
func TestLongBodyIsReadToTheCap(t *testing.T) {
	var body countingReader
	drain(&body)
	if body.n != maxResponseRead || maxResponseRead > 8<<10 {
		t.Errorf("drain read %d bytes of an endless body, want maxResponseRead (%d), a few KiB", body.n, maxResponseRead)
	}
	url := rawReceiver(t, func(ctx context.Context, conn net.Conn) error {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		endless(ctx, conn, func(int) string { return "400\r\n" + kib + "\r\n" })
		return nil
	})
	began := time.Now()
	r := attemptWithin(t, Policy{AllowHTTP: true, AllowPrivate: true}, url, time.Minute)
	if took := time.Since(began); r.State != companydocs.DeliveryDelivered || took > 20*time.Second {
		t.Errorf("endless body: %+v after %v, want delivered once the cap was read", r, took)
	}
}

// countingReader is an endless body that counts what was read of it.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
