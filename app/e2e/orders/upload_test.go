package orders

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"companydocs/internal/e2e"
)

// TestUploadRefusedBeforeTheBody: an upload announcing 20 MiB and sending
// 5 bytes of them is answered at once, without its body, when its
// session is missing (401), a client's (403), or its order is not
// REQUESTED (409); and, with a Content-Length over 20 MiB, 413 once the
// session, role and order are checked.
func TestUploadRefusedBeforeTheBody(t *testing.T) {
	ts, _ := e2e.FlowServer(t)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client := ts.Session(t, "acme", 10)
	op := ts.OperatorSession(t, "ops")
	o := ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "AD", "ad-single"))
	head := func(token string, length int) string {
		auth := ""
		if token != "" {
			auth = "Authorization: Bearer " + token + "\r\n"
		}
		return fmt.Sprintf("PUT /api/v1/operator/orders/%s/document HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n%sContent-Length: %d\r\n\r\n%%PDF-", o.ID, auth, length)
	}
	host := strings.TrimPrefix(ts.Base, "http://")
	check := func(what string, want int, raw string) {
		t.Helper()
		started := time.Now()
		status, err := e2e.RawExchange(host, raw)
		if err != nil || status != want {
			t.Errorf("%s: %d (%v), want %d", what, status, err, want)
		}
		if took := time.Since(started); took > 5*time.Second {
			t.Errorf("%s: answered after %v, want at once (the body never comes)", what, took)
		}
	}
	check("no session", http.StatusUnauthorized, head("", 20<<20))
	check("a client's session", http.StatusForbidden, head(client, 20<<20))
	check("an order in PREVIEW_READY", http.StatusConflict, head(op, 20<<20))
	ts.Act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/pay", op, nil)
	ts.Act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/request", op, nil)
	check("a Content-Length over 20 MiB", http.StatusRequestEntityTooLarge, head(op, 20<<20+1))
	if got := ts.Act(t, 200, "GET", "/api/v1/operator/orders/"+o.ID+"/", op, nil); got.Status != "REQUESTED" {
		t.Errorf("after the refused uploads the order is %s, want REQUESTED", got.Status)
	}
	ts.Act(t, 200, "PUT", "/api/v1/operator/orders/"+o.ID+"/document", op, string(e2e.LifecyclePDF), "Content-Type", "application/pdf")
	if n, found := ts.Metric(t, "companydocs_document_transfers_in_flight", "kind", "upload"); !found || n != 0 {
		t.Errorf("document_transfers_in_flight{kind=upload} = %v (found %v) after the delivery, want 0", n, found)
	}
}
