package ordering

import (
	"strings"

	"companydocs"
	"companydocs/messages"
)

// The service stores and sends its sentences in English (webhook events,
// stored orders); an answer to a person's request says them in the
// language the request asks for. These functions return copies with the
// coded sentences said in lang; what has no code (an order stored before
// codes existed) keeps its English.

// OrderIn returns o with its next step and its coded history notes said
// in lang; o itself is not changed.
func OrderIn(lang string, o *companydocs.Order) *companydocs.Order {
	if o == nil || lang == messages.English {
		return o
	}
	c := *o
	if c.NextStep.Code != "" {
		c.NextStep.Message = sayIn(lang, "step."+c.NextStep.Code, c.NextStep.Params)
	}
	c.History = make([]companydocs.HistoryEntry, len(o.History))
	for i, h := range o.History {
		if h.Code != "" {
			h.Note = sayIn(lang, "history."+h.Code, h.Params)
		}
		c.History[i] = h
	}
	return &c
}

// OrdersIn says every order of a list in lang (OrderIn).
func OrdersIn(lang string, orders []*companydocs.Order) []*companydocs.Order {
	out := make([]*companydocs.Order, len(orders))
	for i, o := range orders {
		out[i] = OrderIn(lang, o)
	}
	return out
}

// PreviewIn returns p with its blockers said in lang.
func PreviewIn(lang string, p *companydocs.Preview) *companydocs.Preview {
	if p == nil || lang == messages.English {
		return p
	}
	c := *p
	c.Blockers = make([]companydocs.Blocker, len(p.Blockers))
	for i, b := range p.Blockers {
		b.Message = sayIn(lang, "blocker."+b.Code, &b.Params)
		c.Blockers[i] = b
	}
	return &c
}

// SaidPlan is a plan as GET /documents/plans/ answers it: with Label, the
// short name a person chooses it by, in the request's language.
type SaidPlan struct {
	companydocs.Plan
	Label string `json:"label"`
}

// PlansIn gives each plan its label in lang: its documents, its kind and
// its price ("AD, single order (4.50 EUR)"), short enough for a phone's
// select box.
func PlansIn(lang string, plans []companydocs.Plan) []SaidPlan {
	out := make([]SaidPlan, len(plans))
	for i, p := range plans {
		docs := make([]string, len(p.DocumentTypes))
		for k, t := range p.DocumentTypes {
			docs[k] = string(t)
		}
		kind := p.Kind
		if key := "plan.kind." + p.Kind; messages.Has(key) {
			kind = messages.Say(lang, key, nil)
		}
		price := moneyIn(lang, p.Price, p.Currency)
		if p.CreditCost > 0 && strings.Trim(p.Price, "0.") == "" {
			price = creditWordsIn(lang, p.CreditCost)
		}
		out[i] = SaidPlan{Plan: p, Label: messages.Say(lang, "plan.label",
			messages.Args{"documents": strings.Join(docs, " + "), "kind": kind, "price": price})}
	}
	return out
}
