//go:build unix

package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"companydocs"
	"companydocs/internal/syncbuf"
)

// mapCutFile maps a file of two pages and cuts it to nothing, as a store's
// file cut short under its mapping: a read of the mapping is then a SIGBUS.
func mapCutFile(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mapped")
	ps := os.Getpagesize()
	if err := os.WriteFile(path, make([]byte, 2*ps), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := syscall.Mmap(int(f.Fd()), 0, 2*ps, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDamagedMappingInAHandlerAnswers500: a handler that reads a mapped
// file cut short under it (a store damaged on disk) faults; the request is
// answered 500 in the error shape and the fault is logged, and the server,
// and with it the test process, goes on answering on the same
// connections. Without panic-on-fault for the request's goroutine the
// SIGBUS ends the process.
func TestDamagedMappingInAHandlerAnswers500(t *testing.T) {
	mapped := mapCutFile(t)
	logs := &syncbuf.Buffer{}
	s := newTestServer(t, Deps{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	s.app.Get("/test/mapped", func(c *fiber.Ctx) error {
		return c.SendString(string(mapped[len(mapped)-1:]))
	})
	base := "http://" + serveTest(t, s)
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range 5 {
		status, body := get(t, client, base+"/test/mapped")
		var e errorBody
		if status != http.StatusInternalServerError || json.Unmarshal(body, &e) != nil || e.Error.Code != companydocs.EINTERNAL || e.Error.Message == "" {
			t.Fatalf("read %d of a cut mapping: %d %s; want 500 with code %q", i+1, status, body, companydocs.EINTERNAL)
		}
		if status, body := get(t, client, base+"/healthz"); status != http.StatusOK {
			t.Fatalf("healthz after fault %d: %d %s", i+1, status, body)
		}
	}
	if got := strings.Count(logs.String(), `"msg":"panic in handler"`); got != 5 {
		t.Errorf("%d panics logged, want 5:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), `"fault_address":"0x`) {
		t.Errorf("the log does not say a memory fault happened:\n%s", logs.String())
	}
}

func get(t *testing.T, client *http.Client, url string) (int, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, body
}
