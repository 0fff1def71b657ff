package e2e

import (
	"bytes"
	"io"
	"net/http"
)

// PostStripeEvent posts a signed Stripe event to node s and returns the
// status and the body.
func (s *CrashServer) PostStripeEvent(e StripeEvent) (int, []byte, error) {
	req, err := http.NewRequest("POST", s.Base+"/api/v1/payments/stripe/events", bytes.NewReader(e.Body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", e.Signature)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}
