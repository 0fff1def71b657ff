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
	return sayIn(messages.English, key, p)
}

// sayIn says the sentence key with the params p in lang.
func sayIn(lang, key string, p *companydocs.Params) string {
	return strings.TrimSpace(messages.Say(lang, key, paramArgs(lang, p)))
}

// paramArgs turns the params of a blocker, next step or history entry
// into the words their sentences use in lang, as the page does (app.js
// paramWords): names of documents, money, credits, and a person's note
// quoted, never spliced into the sentence.
func paramArgs(lang string, p *companydocs.Params) messages.Args {
	if p == nil {
		p = &companydocs.Params{}
	}
	en := func(key string, args messages.Args) string { return messages.Say(lang, key, args) }
	documentName := func(t companydocs.DocumentType) string { return documentNameIn(lang, t) }
	creditWords := func(n int64) string { return creditWordsIn(lang, n) }
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
	case p.RefundedAmount != "" && p.Provider != "":
		a["refund"] = " " + en("refund.provider", messages.Args{"amount": money(p.RefundedAmount, p.Currency)})
	case p.RefundedAmount != "":
		a["refund"] = " " + en("refund.payment", messages.Args{"amount": money(p.RefundedAmount, p.Currency)})
	}
	a["refunded"] = money(p.RefundedAmount, p.Currency)
	a["payment_url"] = p.PaymentURL
	if p.ExpiresAt != nil {
		a["expires"] = p.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return a
}

// creditWordsIn counts credits in words: "1 credit", "5 credits".
func creditWordsIn(lang string, n int64) string {
	if n == 1 {
		return messages.Say(lang, "credits.one", nil)
	}
	return messages.Say(lang, "credits.many", messages.Args{"n": n})
}

// money writes an amount with its currency: "4.50 EUR".
func money(amount, currency string) string {
	return strings.TrimSpace(amount + " " + currency)
}

// documentNameIn names a document type: "Current printout (AD)".
func documentNameIn(lang string, t companydocs.DocumentType) string {
	if key := "doc." + string(t); messages.Has(key) {
		return messages.Say(lang, key, nil)
	}
	return string(t)
}

// blocked refuses a strict create with its first blocker, said from the
// catalog in the language the request asks for.
func blocked(code string, b companydocs.Blocker, key string) *companydocs.Error {
	argsIn := func(lang string) messages.Args {
		return messages.Args{"blocker": sayIn(lang, "blocker."+b.Code, &b.Params)}
	}
	e := companydocs.Refusal(code, key, argsIn(messages.English))
	e.ArgsIn = argsIn
	return e
}
