package e2e

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"time"
)

// RawExchange writes raw to a new connection and returns the status of
// the answer, or 0 when the server closed the connection without one. An
// error means the server did not answer or close within the time limit.
func RawExchange(host, raw string) (int, error) {
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	go conn.Write([]byte(raw)) // the server may stop reading early
	line, err := readStatusLine(conn)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return 0, fmt.Errorf("no answer within 15 s: %w", err)
		}
		return 0, nil
	}
	var proto string
	var status int
	if _, err := fmt.Sscanf(line, "%s %d", &proto, &status); err != nil {
		return 0, fmt.Errorf("status line %q: %w", line, err)
	}
	return status, nil
}

func readStatusLine(conn net.Conn) (string, error) {
	var buf bytes.Buffer
	b := make([]byte, 1)
	for {
		if _, err := conn.Read(b); err != nil {
			if buf.Len() > 0 {
				return buf.String(), nil
			}
			return "", err
		}
		if b[0] == '\n' {
			return strings.TrimSpace(buf.String()), nil
		}
		buf.WriteByte(b[0])
	}
}
