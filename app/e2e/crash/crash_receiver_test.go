package crash

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"companydocs/internal/e2e"
)

func newCrashReceiver(t *testing.T) *e2e.CrashReceiver {
	r := &e2e.CrashReceiver{Secrets: map[string]string{}, Got: map[string]map[string]e2e.CrashEvent{}, Refusals: map[string]bool{}}
	r.Srv = httptest.NewServer(http.HandlerFunc(r.Serve))
	t.Cleanup(r.Srv.Close)
	return r
}
