package companydocs

import "time"

// The outbound webhooks' domain: an endpoint an account registers, the
// delivery of an event to it and its attempts, as the API shows them, and
// the task and result a dispatcher (package webhook) trades with the
// ordering service for each attempt.

// Webhook delivery states, as the deliveries route shows them.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookEndpoint is a URL an account registered to receive the events of
// its orders (an operator's endpoint receives those of every account).
type WebhookEndpoint struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// Secret ("whsec_" and base64) signs the deliveries; it is shown only
	// in the answer that creates the endpoint.
	Secret string `json:"secret,omitempty"`
}

// WebhookAttempt is one try to deliver an event to an endpoint.
type WebhookAttempt struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	// StatusCode is the receiver's HTTP status; 0 when no answer came,
	// then Error says why.
	StatusCode int    `json:"status_code,omitempty"`
	Error      string `json:"error,omitempty"`
}

// WebhookDelivery is the state of one event at one endpoint.
type WebhookDelivery struct {
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	OrderID   string `json:"order_id"`
	// State is pending, delivered or failed (no retry left).
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	// NextAttempt is when a pending delivery is tried next.
	NextAttempt *time.Time `json:"next_attempt,omitempty"`
	// Attempts are the most recent tries, oldest first.
	Attempts []WebhookAttempt `json:"attempts"`
}

// WebhookTask is one due delivery attempt, as a dispatcher gets it from
// the store: where to send which body, signed with which secret.
type WebhookTask struct {
	EndpointID string
	URL        string
	Secret     string
	// EventID is also the webhook-id header, the same on every retry.
	EventID string
	Body    []byte
	// Attempt numbers the attempt about to be made, from 1.
	Attempt int
	// CreatedAt is when the delivery was made (the retry window starts).
	CreatedAt time.Time
}

// WebhookResult is the outcome of one attempt: the state it leaves the
// delivery in and, while pending, when to try again.
type WebhookResult struct {
	EndpointID, EventID string
	Attempt             WebhookAttempt
	State               string
	NextAttempt         time.Time
}
