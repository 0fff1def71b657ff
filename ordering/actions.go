package ordering

import "companydocs"

// Actions a caller may take on an order. Every answer that shows an order
// lists those its caller may take now (Order.AllowedActions), so that a
// front end offers exactly these and repeats no rule of the lifecycle.
const (
	ActionPay       = "pay"        // operator: payment confirmed
	ActionPayOnline = "pay_online" // client: pay on the provider's payment page (next_step.params.payment_url) while it is open
	ActionRequest   = "request"    // operator: asked of the register
	ActionDeliver   = "deliver"    // operator: the register's PDF uploaded
	ActionFail      = "fail"       // operator, with a reason
	ActionCancel    = "cancel"     // client (its own order) or operator
	ActionDownload  = "download"   // client: the delivered PDF of its own order
)

// actionStatus is the status each transition action moves an order to;
// whether the caller may is the one transition table's answer
// (companydocs.CanTransition).
var actionStatus = map[string]string{
	ActionPay:     companydocs.OrderStatusPaid,
	ActionRequest: companydocs.OrderStatusRequested,
	ActionDeliver: companydocs.OrderStatusDelivered,
	ActionFail:    companydocs.OrderStatusFailed,
	ActionCancel:  companydocs.OrderStatusCancelled,
}

// Actions lists every action in the order a front end offers them: the
// operator's steps along the lifecycle, then cancel, then download.
var Actions = []string{ActionPay, ActionPayOnline, ActionRequest, ActionDeliver, ActionFail, ActionCancel, ActionDownload}

// AllowedActions lists what an account of role may do with o now, in the
// order of Actions: the transitions the table lets its actor make (a
// client's only is cancel; an operator does not confirm a payment a
// provider takes), for a client the payment on the provider's page while
// it is open and the download of a delivered document. An operator does not download: documents are the client's.
// The list is never nil, so that an answer says [] rather than null.
func AllowedActions(o *companydocs.Order, role string) []string {
	actor := companydocs.ActorClient
	if role == companydocs.RoleOperator {
		actor = companydocs.ActorOperator
	}
	out := []string{}
	for _, a := range Actions {
		ok := companydocs.CanTransition(o.Status, actionStatus[a], actor)
		switch a {
		case ActionPay: // an order paid through a provider is paid by its events only
			ok = ok && o.Payment == nil
		case ActionPayOnline:
			ok = actor == companydocs.ActorClient && o.Status == companydocs.OrderStatusPreviewReady && o.Payment != nil && o.Payment.Status == companydocs.PaymentOpen
		case ActionDownload:
			ok = actor == companydocs.ActorClient && o.Status == companydocs.OrderStatusDelivered && o.Document != nil
		}
		if ok {
			out = append(out, a)
		}
	}
	return out
}
