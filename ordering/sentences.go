package ordering

import (
	"strings"

	"companydocs"
	"companydocs/messages"
)

// say says the catalog's sentence key (package messages) in English with
// the words paramArgs makes of p: the message of a blocker, a next step
// or a history entry, which a client can say in its own language from
// the same code and params.
func say(key string, p *companydocs.Params) string {
	return strings.TrimSpace(messages.Say(messages.English, key, paramArgs(p)))
}

// paramArgs turns the params of a blocker, next step or history entry
// into the words their sentences use, as the page does (app.js
// paramWords): names of documents, money, credits, and a person's note
// quoted, never spliced into the sentence.
func paramArgs(p *companydocs.Params) messages.Args {
	if p == nil {
		p = &companydocs.Params{}
	}
	en := func(key string, args messages.Args) string { return messages.Say(messages.English, key, args) }
	docs := make([]string, len(p.DocumentTypes))
	for i, t := range p.DocumentTypes {
		docs[i] = documentName(t)
	}
	a := messages.Args{
		"company": p.CompanyName, "profile_id": p.ProfileID, "order": p.OrderID, "plan_id": p.PlanID, "plan": p.PlanID,
		"document": documentName(p.DocumentType), "documents": strings.Join(docs, ", "), "held": "",
		"amount": money(p.Amount, p.Currency), "credits": creditWords(p.Credits), "note": "", "refund": "",
	}
	if len(docs) > 0 {
		a["held"] = en("blocker.held", messages.Args{"documents": a["documents"]})
	}
	if p.Balance != nil {
		a["balance"] = creditWords(*p.Balance)
	}
	if p.Note != "" {
		a["note"] = en("note.quoted", messages.Args{"text": p.Note})
		if !strings.ContainsAny(p.Note[len(p.Note)-1:], ".!?") {
			a["note"] = a["note"].(string) + "."
		}
	}
	switch {
	case p.RefundedCredits > 0:
		a["refund"] = " " + en("refund.credits", messages.Args{"credits": creditWords(p.RefundedCredits)})
	case p.RefundedAmount != "":
		a["refund"] = " " + en("refund.payment", messages.Args{"amount": money(p.RefundedAmount, p.Currency)})
	}
	return a
}

// creditWords counts credits in words: "1 credit", "5 credits".
func creditWords(n int64) string {
	if n == 1 {
		return messages.Say(messages.English, "credits.one", nil)
	}
	return messages.Say(messages.English, "credits.many", messages.Args{"n": n})
}

// money writes an amount with its currency: "4.50 EUR".
func money(amount, currency string) string {
	return strings.TrimSpace(amount + " " + currency)
}

// documentName names a document type in English: "Current printout (AD)".
func documentName(t companydocs.DocumentType) string {
	if key := "doc." + string(t); messages.Has(key) {
		return messages.Say(messages.English, key, nil)
	}
	return string(t)
}
