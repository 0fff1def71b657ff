package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"companydocs"
)

// crashMove is one transition a client or the operator asks for.
type crashMove struct {
	actor, action, to string
}

// crashMoves lists, per status, the transitions the load asks for, each
// as often as it appears (so that most orders move on, and some end
// cancelled or failed early).
var crashMoves = map[string][]crashMove{
	companydocs.OrderStatusPreviewReady: {
		{"operator", "pay", companydocs.OrderStatusPaid}, {"operator", "pay", companydocs.OrderStatusPaid},
		{"operator", "pay", companydocs.OrderStatusPaid}, {"operator", "pay", companydocs.OrderStatusPaid},
		{"client", "cancel", companydocs.OrderStatusCancelled}, {"operator", "cancel", companydocs.OrderStatusCancelled},
	},
	companydocs.OrderStatusPaid: {
		{"operator", "request", companydocs.OrderStatusRequested}, {"operator", "request", companydocs.OrderStatusRequested},
		{"operator", "request", companydocs.OrderStatusRequested}, {"client", "cancel", companydocs.OrderStatusCancelled},
		{"operator", "fail", companydocs.OrderStatusFailed}, {"operator", "cancel", companydocs.OrderStatusCancelled},
	},
	companydocs.OrderStatusRequested: {
		{"operator", "document", companydocs.OrderStatusDelivered}, {"operator", "document", companydocs.OrderStatusDelivered},
		{"operator", "document", companydocs.OrderStatusDelivered}, {"operator", "document", companydocs.OrderStatusDelivered},
		{"operator", "fail", companydocs.OrderStatusFailed}, {"operator", "cancel", companydocs.OrderStatusCancelled},
	},
}

// known records an order the clients learnt about.
func (j *CrashJournal) known(id, account, status string) {
	if o, ok := j.Orders[id]; ok {
		if !companydocs.TerminalStatus(o.status) {
			o.status = status
		}
		return
	}
	j.Orders[id] = &CrashOrder{account: account, status: status}
	j.open = append(j.open, id)
}

// Refresh replaces the known statuses by the stored ones (the answers a
// kill cut off left them unknown) and the open list by the stored open
// orders.
func (j *CrashJournal) Refresh(stored map[string]*companydocs.Order) {
	j.Orders = map[string]*CrashOrder{}
	j.open = j.open[:0]
	for id, o := range stored {
		j.Orders[id] = &CrashOrder{account: o.Account, status: o.Status}
		if !companydocs.TerminalStatus(o.Status) {
			j.open = append(j.open, id)
		}
	}
}

// pick returns a random order that was open when last seen and a move
// for its status, or false when there is none.
func (j *CrashJournal) pick(rng *rand.Rand) (string, CrashOrder, crashMove, bool) {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	for range 4 {
		if len(j.open) == 0 {
			return "", CrashOrder{}, crashMove{}, false
		}
		i := rng.IntN(len(j.open))
		id := j.open[i]
		o := j.Orders[id]
		if moves := crashMoves[o.status]; len(moves) > 0 {
			m := moves[rng.IntN(len(moves))]
			return id, *o, m, true
		}
		j.open[i] = j.open[len(j.open)-1] // terminal by now: drop it
		j.open = j.open[:len(j.open)-1]
	}
	return "", CrashOrder{}, crashMove{}, false
}

// Move asks for one transition of a random open order and records what
// the answer proves. It reports false when no order was open.
func (s *CrashServer) Move(tb testing.TB, j *CrashJournal, tokens map[string]string, rng *rand.Rand) bool {
	id, o, m, ok := j.pick(rng)
	if !ok {
		return false
	}
	method, path, ctype, body, token := "POST", "/api/v1/operator/orders/"+id+"/"+m.action, "application/json", "", tokens[CrashOperator]
	sha := ""
	switch {
	case m.actor == "client":
		path, token = "/api/v1/documents/orders/"+id+"/cancel", tokens[o.account]
	case m.action == "fail":
		body = `{"reason":"The register does not answer."}`
	case m.action == "document":
		method, ctype = "PUT", "application/pdf"
		body, sha = crashPDF(rng)
	}
	var out struct {
		Status   string
		Document *companydocs.OrderDocument
		Error    struct{ Code string }
	}
	status := s.Send(tb, method, path, ctype, token, body, "", &out)
	j.Mu.Lock()
	defer j.Mu.Unlock()
	switch {
	case status == 0 || (status == http.StatusServiceUnavailable && j.Unknown503):
		j.MovesLost++
		if status != 0 {
			j.Unavailable++
		}
	case status == http.StatusOK && out.Status == m.to:
		j.Moved++
		j.Transitions = append(j.Transitions, crashTransition{Order: id, Status: m.to, Actor: m.actor})
		j.known(id, o.account, m.to)
		if sha != "" {
			j.Uploads[id] = sha
			if out.Document == nil || out.Document.SHA256 != sha {
				j.Failures = append(j.Failures, fmt.Sprintf("order %s: uploaded %s, the answer shows %+v", id, sha, out.Document))
			}
		}
	case status == http.StatusConflict && out.Error.Code == companydocs.EINVALIDTRANSITION:
		j.Conflicts++ // another worker moved it first
	default:
		j.Failures = append(j.Failures, fmt.Sprintf("%s %s by the %s: unexpected answer %d %q %+v", m.action, id, m.actor, status, out.Status, out.Error))
	}
	return true
}

// crashPDF returns a PDF-like body of 1 to 64 KiB, different each time,
// and its SHA-256.
func crashPDF(rng *rand.Rand) (string, string) {
	b := make([]byte, 1024+rng.IntN(63*1024))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b = append([]byte("%PDF-1.7\n"), b...)
	sum := sha256.Sum256(b)
	return string(b), hex.EncodeToString(sum[:])
}
