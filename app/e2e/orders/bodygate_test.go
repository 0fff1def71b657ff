package orders

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
)

// TestMultipartIsNeverRead: on both stores, a multipart body is refused
// 415 on every route of the OpenAPI document and on a path that is no
// route, without a session, with a client's and with an operator's; and a
// multipart body announcing 3 GiB is answered before the client has sent
// more than a few buffers of it, with no temporary file written. (The
// HTTP server used to parse every multipart body of announced length
// before any route ran, into memory and temporary files.)
func TestMultipartIsNeverRead(t *testing.T) {
	e2e.ForEachServerStore(t, func(t *testing.T, storeFlags ...string) {
		dir := t.TempDir()
		e2e.MustBuild(t, dir, 200, e2e.SampleFile(t))
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp) // where a parsed multipart file part would go
		s := e2e.StartServer(t, dir, storeFlags...)
		tokens := map[string]string{"none": "", "client": s.Session(t, "client", 5), "operator": s.OperatorSession(t, "operator")}
		tried := 0
		for _, route := range openAPIOperations(t, s) {
			for who, token := range tokens {
				status, raw := s.Call(t, route.method, route.path, token, multipartBody, nil, "Content-Type", "multipart/form-data; boundary=x")
				if status != http.StatusUnsupportedMediaType || !strings.Contains(string(raw), companydocs.EUNSUPPORTEDMEDIA) {
					t.Errorf("%s %s (session: %s) with a multipart body: %d %.200s, want 415 %s", route.method, route.path, who, status, raw, companydocs.EUNSUPPORTEDMEDIA)
				}
				tried++
			}
		}
		sent := sendHugeMultipart(t, s.Addr(), "/no/such/route", 3<<30)
		if sent > 64<<20 {
			t.Errorf("the server answered after %d MiB of a multipart body it refuses", sent>>20)
		}
		if files, _ := os.ReadDir(tmp); len(files) > 0 {
			t.Errorf("the server wrote %d temporary files for refused multipart bodies: %s", len(files), files[0].Name())
		}
		t.Logf("%d multipart requests refused 415; a 3 GiB multipart body answered after %d KiB were sent", tried, sent>>10)
	})
}

const multipartBody = "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n--x--\r\n"

type operation struct{ method, path string }

// openAPIOperations lists every operation of the served OpenAPI document,
// its path parameters filled in.
func openAPIOperations(t *testing.T, s *e2e.TestServer) []operation {
	t.Helper()
	_, raw, _ := s.Do(t, "GET", "/api/v1/openapi.json", "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []operation
	for path, item := range doc.Paths {
		for method := range item {
			if m := strings.ToUpper(method); m == "GET" || m == "POST" || m == "PUT" || m == "DELETE" {
				out = append(out, operation{m, strings.ReplaceAll(path, "{id}", "ord_x")})
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("openapi.json lists %d operations", len(out))
	}
	return out
}

// sendHugeMultipart announces a multipart body of length bytes and sends
// it until the server answers; it returns how many bytes were sent by
// then.
func sendHugeMultipart(t *testing.T, addr, path string, length int64) int64 {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: %d\r\n\r\n", path, length)
	head += "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	go func() {
		chunk := make([]byte, 1<<20)
		for sent.Load() < length {
			n, err := conn.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to a multipart body of %d bytes: %v (%d bytes sent)", length, err, sent.Load())
	}
	if !strings.Contains(status, " 415 ") {
		t.Errorf("a multipart body of %d bytes: %q, want 415", length, strings.TrimSpace(status))
	}
	return sent.Load()
}
