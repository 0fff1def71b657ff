package orders

import (
	"net/http"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

// TestWritesPerAccountAreLimited runs the server with a budget of 3
// changes per account (--write-rate 0.01 --write-burst 3): an account's
// order creations, cancellations and webhook endpoint changes share it,
// the fourth is answered 429 rate_limited with Retry-After, and another
// account's budget is its own. This is what bounds the disk one account
// can fill per hour (RELIABILITY.md, "Resources").
func TestWritesPerAccountAreLimited(t *testing.T) {
	ts, _ := e2e.FlowServer(t, "--write-rate", "0.01", "--write-burst", "3", "--webhook-allow-http", "--webhook-allow-private")
	profile := ts.FlowProfile(t)
	flooder, other := ts.Session(t, "flooder", 10), ts.Session(t, "other", 10)

	var o companydocs.Order
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/", flooder, e2e.OrderJSON(profile, "AD", "ad-single"), &o); status != http.StatusCreated {
		t.Fatalf("first order: %d %s", status, raw)
	}
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/"+o.ID+"/cancel", flooder, `{"note":"wrong company"}`, nil); status != http.StatusOK {
		t.Fatalf("cancel: %d %s", status, raw)
	}
	if status, raw := ts.Call(t, "POST", "/api/v1/webhooks/", flooder, `{"url":"http://127.0.0.1:9/hook"}`, nil); status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", status, raw)
	}
	status, raw, hdr := ts.Do(t, "POST", "/api/v1/documents/orders/", e2e.OrderJSON(profile, "CD", "cd-single"), "Authorization", "Bearer "+flooder)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("the fourth change of one account: status %d, Retry-After %q, %s; want 429 with Retry-After", status, hdr.Get("Retry-After"), raw)
	}
	ts.WantError(t, http.StatusTooManyRequests, companydocs.ERATELIMITED, "POST", "/api/v1/documents/orders/"+o.ID+"/cancel", `{}`, "Authorization", "Bearer "+flooder)
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/", other, e2e.OrderJSON(profile, "AD", "ad-single"), nil); status != http.StatusCreated {
		t.Errorf("another account's order while the first is limited: %d %s", status, raw)
	}
	if status, _ := ts.Call(t, "GET", "/api/v1/documents/orders/", flooder, nil, nil); status != http.StatusOK {
		t.Errorf("reading its orders while limited: %d, want 200 (only changes are limited)", status)
	}
}
