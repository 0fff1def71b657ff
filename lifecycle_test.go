package companydocs

import (
	"strings"
	"testing"
)

// TestCanTransition checks every pair of statuses for every actor against
// the product's list of allowed transitions.
func TestCanTransition(t *testing.T) {
	allowed := map[[3]string]bool{
		{OrderStatusPreviewReady, OrderStatusPaid, ActorOperator}:      true,
		{OrderStatusPreviewReady, OrderStatusPaid, ActorSystem}:        true,
		{OrderStatusPreviewReady, OrderStatusCancelled, ActorClient}:   true,
		{OrderStatusPreviewReady, OrderStatusCancelled, ActorOperator}: true,
		{OrderStatusPreviewReady, OrderStatusCancelled, ActorSystem}:   true, // a checkout that expired unpaid
		{OrderStatusPaid, OrderStatusRequested, ActorOperator}:         true,
		{OrderStatusPaid, OrderStatusCancelled, ActorClient}:           true,
		{OrderStatusPaid, OrderStatusCancelled, ActorOperator}:         true,
		{OrderStatusPaid, OrderStatusFailed, ActorOperator}:            true,
		{OrderStatusRequested, OrderStatusDelivered, ActorOperator}:    true,
		{OrderStatusRequested, OrderStatusFailed, ActorOperator}:       true,
		{OrderStatusRequested, OrderStatusCancelled, ActorOperator}:    true,
	}
	n := 0
	for _, from := range OrderStatuses {
		for _, to := range OrderStatuses {
			for _, actor := range []string{ActorClient, ActorOperator, ActorSystem} {
				want := allowed[[3]string{from, to, actor}]
				if got := CanTransition(from, to, actor); got != want {
					t.Errorf("CanTransition(%s, %s, %s) = %v, want %v", from, to, actor, got, want)
				}
				if want {
					n++
				}
			}
		}
	}
	if n != len(allowed) {
		t.Errorf("%d allowed transitions found in the table, want %d", n, len(allowed))
	}
	for _, s := range OrderStatuses {
		if TerminalStatus(s) != (len(NextStatuses(s, ActorOperator)) == 0) {
			t.Errorf("%s: terminal=%v but operator may move it to %v", s, TerminalStatus(s), NextStatuses(s, ActorOperator))
		}
		if WorkflowOf(s) == "" {
			t.Errorf("%s has no workflow status", s)
		}
	}
}

func TestInvalidTransitionMessage(t *testing.T) {
	e := ErrInvalidTransition("ord_x", OrderStatusPaid, OrderStatusDelivered, ActorOperator)
	if e.Code != EINVALIDTRANSITION || !strings.Contains(e.Message, "PAID") || !strings.Contains(e.Message, "REQUESTED, FAILED, CANCELLED") {
		t.Errorf("message %q", e.Message)
	}
	if de, lang := e.MessageIn("de"); lang != "de" || !strings.Contains(de, "Die Bestellung ord_x ist PAID") || !strings.Contains(de, "REQUESTED, FAILED, CANCELLED") {
		t.Errorf("German message %q (%s)", de, lang)
	}
	e = ErrInvalidTransition("ord_x", OrderStatusCancelled, OrderStatusCancelled, ActorClient)
	if !strings.Contains(e.Message, "final") {
		t.Errorf("message %q", e.Message)
	}
}
