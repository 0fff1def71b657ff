package companydocs

import (
	"slices"
	"strings"
	"time"
)

// Order statuses. DELIVERED, FAILED and CANCELLED are terminal.
const (
	OrderStatusPreviewReady = "PREVIEW_READY" // created; one-off plans await payment
	OrderStatusPaid         = "PAID"
	OrderStatusRequested    = "REQUESTED" // asked of the register
	OrderStatusDelivered    = "DELIVERED"
	OrderStatusFailed       = "FAILED"
	OrderStatusCancelled    = "CANCELLED"
)

// OrderStatuses lists every status in lifecycle order.
var OrderStatuses = []string{OrderStatusPreviewReady, OrderStatusPaid, OrderStatusRequested, OrderStatusDelivered, OrderStatusFailed, OrderStatusCancelled}

// Workflow statuses, the coarse view of an order's status.
const (
	WorkflowStarted    = "started"
	WorkflowInProgress = "in_progress"
	WorkflowCompleted  = "completed"
	WorkflowFailed     = "failed"
	WorkflowCancelled  = "cancelled"
)

// Actors of a transition.
const (
	ActorClient   = "client"   // the account that owns the order
	ActorOperator = "operator" // an account with the operator role
	ActorSystem   = "system"   // the service itself (credit plans are paid at creation, a payment provider's events)
)

// Account roles.
const (
	RoleClient   = "client"
	RoleOperator = "operator"
)

// HistoryEntry is one step of an order's life.
type HistoryEntry struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Note   string    `json:"note"`
	// Code names the note's sentence and Params holds its values, as for
	// a next step; a note a person wrote is in Params.Note as written.
	// Entries stored before codes existed have neither.
	Code   string  `json:"code,omitempty"`
	Params *Params `json:"params,omitempty"`
}

// OrderDocument is the delivered PDF of an order.
type OrderDocument struct {
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	ContentType string `json:"content_type"`
	DownloadURL string `json:"download_url"`
}

// transitions is the one table of allowed transitions: from -> to -> the
// actors that may make it. Everything not listed is refused.
var transitions = map[string]map[string][]string{
	OrderStatusPreviewReady: {
		OrderStatusPaid:      {ActorOperator, ActorSystem},
		OrderStatusCancelled: {ActorClient, ActorOperator, ActorSystem},
	},
	OrderStatusPaid: {
		OrderStatusRequested: {ActorOperator},
		OrderStatusCancelled: {ActorClient, ActorOperator},
		OrderStatusFailed:    {ActorOperator},
	},
	OrderStatusRequested: {
		OrderStatusDelivered: {ActorOperator},
		OrderStatusFailed:    {ActorOperator},
		OrderStatusCancelled: {ActorOperator},
	},
}

// CanTransition reports whether actor may move an order from one status
// to another.
func CanTransition(from, to, actor string) bool {
	return slices.Contains(transitions[from][to], actor)
}

// NextStatuses lists the statuses actor may move an order in status from
// to, in lifecycle order.
func NextStatuses(from, actor string) []string {
	var out []string
	for _, to := range OrderStatuses {
		if CanTransition(from, to, actor) {
			out = append(out, to)
		}
	}
	return out
}

// TerminalStatus reports whether nothing can happen to an order any more.
func TerminalStatus(status string) bool {
	return status == OrderStatusDelivered || status == OrderStatusFailed || status == OrderStatusCancelled
}

// ValidOrderStatus reports whether s is one of OrderStatuses.
func ValidOrderStatus(s string) bool {
	return slices.Contains(OrderStatuses, s)
}

// WorkflowOf maps a status to its workflow status.
func WorkflowOf(status string) string {
	switch status {
	case OrderStatusPreviewReady:
		return WorkflowStarted
	case OrderStatusPaid, OrderStatusRequested:
		return WorkflowInProgress
	case OrderStatusDelivered:
		return WorkflowCompleted
	case OrderStatusFailed:
		return WorkflowFailed
	case OrderStatusCancelled:
		return WorkflowCancelled
	}
	return ""
}

// ErrInvalidTransition is the invalid_transition error for an order in
// status from that actor tried to move to status to.
func ErrInvalidTransition(id, from, to, actor string) *Error {
	args := Args{"order": id, "from": from, "to": to, "actor": actor}
	switch next := NextStatuses(from, actor); {
	case TerminalStatus(from):
		return Refusal(EINVALIDTRANSITION, "refusal.transition_from_final", args)
	case len(next) > 0:
		args["next"] = strings.Join(next, ", ")
		return Refusal(EINVALIDTRANSITION, "refusal.transition_elsewhere", args)
	}
	return Refusal(EINVALIDTRANSITION, "refusal.transition_not_now", args)
}
