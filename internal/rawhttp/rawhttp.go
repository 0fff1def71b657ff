// Package rawhttp holds what tests need to play an HTTP peer on a raw
// connection, where net/http would not let them misbehave.
package rawhttp

import (
	"bufio"
	"io"
	"net"
)

// ReadRequestHead reads up to the blank line that ends a request's
// headers (at most 64 KiB), so that a raw receiver answers after the
// request, as a receiver does: an answer before it is an unsolicited
// response, which Go's transport reports as such. It reports whether the
// headers ended.
func ReadRequestHead(conn net.Conn) bool {
	br := bufio.NewReader(io.LimitReader(conn, 64<<10))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			return true
		}
	}
}
