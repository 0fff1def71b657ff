package browser

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/internal/realdata"

	"github.com/chromedp/chromedp"
)

// payView is an order's payment as the page shows it, read from the page.
type payView struct {
	Kind        string `json:"kind"` // the next step's kind
	Link        string `json:"link"` // the words of "Pay now"
	Href        string `json:"href"`
	LinkName    string `json:"link_name"` // its aria-label
	By          string `json:"by"`
	ExpiresAt   string `json:"expires_at"`
	Status      string `json:"status"` // the payment's status code kept in data-payment-status
	StatusWords string `json:"status_words"`
	PaidAt      string `json:"paid_at"`
	Refund      string `json:"refund"` // the refund's status code kept in data-refund-status
	RefundWords string `json:"refund_words"`
	Amount      string `json:"amount"`
	Session     string `json:"session"`
	PaymentID   string `json:"payment_id"`
	RefundID    string `json:"refund_id"`
	Attempts    string `json:"attempts"`
}

const readPayment = `(root => {
	const d = document.querySelector(root);
	if (!d) { return null; }
	const q = s => (d.querySelector(s) || {textContent: ""}).textContent;
	const a = d.querySelector(".next-step a.pay-now"), pay = d.querySelector(".payment"), by = d.querySelector(".next-step .pay");
	return {
		kind: d.querySelector(".next-step").dataset.kind, link: a ? a.textContent : "", href: a ? a.getAttribute("href") : "",
		link_name: a ? a.getAttribute("aria-label") : "",
		by: q(".pay-by"), expires_at: by ? by.dataset.expiresAt : "",
		status: pay ? pay.dataset.paymentStatus : "", status_words: q(".pay-status"), paid_at: q(".pay-paid-at"),
		refund: pay ? pay.dataset.refundStatus : "", refund_words: q(".pay-refund"),
		amount: q(".pay-amount"), session: q(".pay-session"), payment_id: q(".pay-payment-id"), refund_id: q(".pay-refund-id"), attempts: q(".pay-attempts"),
	};
})(%q)`

// readPay reads the payment of the order shown in root (a CSS selector).
func (p *pageDriver) readPay(root string) payView {
	p.t.Helper()
	v := eval[*payView](p, "read the payment in "+root, fmt.Sprintf(readPayment, root))
	if v == nil {
		p.t.Fatalf("no order shown in %s", root)
	}
	return *v
}

// TestBrowserStripePayment drives the page against the real server with a
// plan paid through Stripe (stripe-mock, Stripe's own mock of its API) on
// a 375 px phone: an order on it shows "Pay now" with the payment page's
// URL and until when, in English and in German; after Stripe's signed
// event the order is paid online, and the link is gone. The operator's
// queue shows the payment (session, amount, Stripe's payment id) and no
// way to confirm the payment by hand; a paid order the operator cancels
// shows its refund pending and then made, to the operator and to the
// client. Following the payment URL is out of scope: Stripe is not here.
func TestBrowserStripePayment(t *testing.T) {
	chrome := browserExecutable(t)
	front := e2e.StartStripeFront(t, 0)
	_, flags := e2e.StripeEnv(t, front)
	m := startBrowserServer(t, realdata.Path(t, "offeneregister", "fixtures_665.jsonl"), flags...)
	clientKey, operatorKey := clientAndOperator(t, m, "card-client", "card-operator")
	p := &pageDriver{t: t, ctx: newBrowser(t, chrome)}
	p.openOnPhone(m)
	p.useEnglish()
	p.typeClue("Rheinbahn AG Düsseldorf")
	p.waitJS("results for Rheinbahn", `document.querySelectorAll("#results > li.card").length > 0`)
	p.signInWith(clientKey)
	p.waitJS("order button on the exact card", `document.querySelector("#results > li.card .order-button") !== null`)

	paid := p.orderPlanDocument("stripe-single", "AD")
	order := func(id string) companydocs.Order {
		o, err := m.Ordering.Orders.Order(context.Background(), "card-client", id)
		if err != nil {
			t.Fatalf("read order %s: %v", id, err)
		}
		return *o
	}
	o := order(paid.ID)
	checkPayNow(t, p.readPay("#order-result .order-details"), o, "Pay now", "Pay by ", "Awaiting payment")
	p.fitsPhone("browser-pay-phone.png")
	open := order(p.orderPlanDocument("stripe-single", "CD").ID)
	p.run("close the order panel", chromedp.Click(chromedp.CSS("#order-result button")), chromedp.WaitNotVisible(chromedp.CSS("#order-panel")))

	p.useLanguage("de")
	p.waitStatus("#orders-list", o.ID, "PREVIEW_READY")
	checkPayNow(t, p.readPay(cardSelector("#orders-list", o.ID, ".order-details")), o, "Jetzt bezahlen", "Bezahlen bis ", "Zahlung ausstehend")
	p.waitJS("the pay step said in German", fmt.Sprintf(`document.querySelector(%q).lang === "de"`, cardSelector("#orders-list", o.ID, ".next-step-text")))
	p.noEnglish("orders awaiting payment")
	p.fitsPhone("browser-pay-phone-de.png")

	// Stripe's signed event pays the order; the page shows it paid online.
	ts := &e2e.TestServer{Main: m, Base: "http://" + m.Addr(), Client: http.DefaultClient}
	if status, outcome := ts.PostEvent(t, e2e.CheckoutEvent(o, "checkout.session.completed", "pi_test_browser")); status != 200 || outcome != "applied" {
		t.Fatalf("checkout.session.completed: %d %s", status, outcome)
	}
	p.run("refresh the orders", chromedp.Click(chromedp.CSS("#orders-refresh")))
	p.waitStatus("#orders-list", o.ID, "PAID")
	v := p.readPay(cardSelector("#orders-list", o.ID, ".order-details"))
	note := p.text("read the payment's history", cardSelector("#orders-list", o.ID, ".timeline-note[data-code=paid_online]"))
	if v.Link != "" || v.Kind == "pay" || v.Status != "paid" || v.StatusWords != "Online bezahlt" || v.PaidAt == "" || v.Session != "" || v.PaymentID != "" ||
		!strings.Contains(note, "online bezahlt") {
		t.Errorf("the paid order in German = %+v, history %q; want it paid online, no link, no Stripe ids for the client", v, note)
	}
	p.noEnglish("an order paid online")
	p.fitsPhone("browser-paid-phone-de.png")
	p.useLanguage("en")
	if v := p.readPay(cardSelector("#orders-list", o.ID, ".order-details")); v.StatusWords != "Paid online" {
		t.Errorf("the paid order in English says %q, want \"Paid online\"", v.StatusWords)
	}
	p.fitsPhone("browser-paid-phone.png")

	p.signOut()
	p.signInWith(operatorKey)
	p.operatorPayments(order(o.ID), open)
	p.signOut()
	p.signInWith(clientKey)
	p.waitStatus("#orders-list", o.ID, "CANCELLED")
	if v := p.readPay(cardSelector("#orders-list", o.ID, ".order-details")); v.Refund != "refunded" || v.RefundWords != "Refunded: €4.50" || v.RefundID != "" || v.Attempts != "" {
		t.Errorf("the refunded order for the client = %+v, want \"Refunded: €4.50\" and none of the operator's details", v)
	}
	p.checkPhoneWidth("browser-refunded-phone.png")
}

// checkPayNow: an order awaiting payment shows its next step "pay" with
// "Pay now" linking to the payment page, until when, and the payment's
// state in words; the client sees none of Stripe's ids.
func checkPayNow(t *testing.T, v payView, o companydocs.Order, link, by, status string) {
	t.Helper()
	if o.Payment == nil || !strings.HasPrefix(o.Payment.URL, "https://") {
		t.Fatalf("order %s has no payment page: %+v", o.ID, o.Payment)
	}
	expires := o.Payment.ExpiresAt
	if v.Kind != "pay" || v.Link != link || !strings.HasPrefix(v.LinkName, link) || !strings.HasSuffix(v.LinkName, o.ID) ||
		v.Href != o.Payment.URL || v.Status != "open" || v.StatusWords != status ||
		v.Session != "" || v.PaymentID != "" || v.Amount != "" {
		t.Errorf("order %s awaiting payment shows %+v; want %q linking to %s and %q", o.ID, v, link, o.Payment.URL, status)
	}
	shown, err := time.Parse(time.RFC3339Nano, v.ExpiresAt)
	if !strings.HasPrefix(v.By, by) || !strings.Contains(v.By, strconv.Itoa(expires.Year())) || err != nil || !shown.Equal(expires) {
		t.Errorf("order %s says %q (expires_at %s), want %q and the expiry %s", o.ID, v.By, v.ExpiresAt, by, expires)
	}
}

// operatorPayments is the operator's queue: the order awaiting payment
// shows its payment page's session and amount and no way to confirm the
// payment; the paid one Stripe's payment id. The operator cancels the
// paid order: the refund shows pending, then made by Stripe.
func (p *pageDriver) operatorPayments(paid, open companydocs.Order) {
	p.t.Helper()
	p.waitJS("the operator's queue", `!document.querySelector("#queue").hidden`)
	p.waitStatus("#queue-list", open.ID, "PREVIEW_READY")
	card := p.readCard("#queue-list", open.ID)
	v := p.readPay(cardSelector("#queue-list", open.ID, ".order-details"))
	if card.Actions != "cancel-order" || v.Link != "" || v.Session != open.Payment.SessionID || v.Amount != "€4.50" || v.PaymentID != "" ||
		v.StatusWords != "Awaiting payment" || !strings.Contains(card.StepText, "payment page") {
		p.t.Errorf("the operator's view of an order awaiting payment: %+v, %+v; want its session and amount, no pay button", card, v)
	}
	eval[string](p, "show every status", `(() => { const s = document.querySelector("#queue-status");
		s.value = ""; s.dispatchEvent(new Event("change")); return s.value; })()`)
	p.waitStatus("#queue-list", paid.ID, "PAID")
	card = p.readCard("#queue-list", paid.ID)
	v = p.readPay(cardSelector("#queue-list", paid.ID, ".order-details"))
	if card.Actions != "request-order,fail-order,cancel-order" || v.Session != paid.Payment.SessionID || v.PaymentID != "pi_test_browser" ||
		v.Amount != "€4.50" || v.StatusWords != "Paid online" || v.Refund != "" {
		p.t.Errorf("the operator's view of an order paid online: %+v, %+v; want its session and Stripe's payment id", card, v)
	}
	p.checkPhoneWidth("browser-queue-pay-phone.png")

	p.run("ask to cancel the paid order", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", paid.ID, ".cancel-order"))))
	if q := p.text("read the question", cardSelector("#queue-list", paid.ID, ".confirm-question")); !strings.Contains(q, "goes back to the client by itself") {
		p.t.Errorf("cancelling an order paid online asks %q, want it to say the payment goes back by itself", q)
	}
	p.run("cancel the paid order", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", paid.ID, ".cancel-order-yes"))))
	p.waitStatus("#queue-list", paid.ID, "CANCELLED")
	if v = p.readPay(cardSelector("#queue-list", paid.ID, ".order-details")); v.Refund != "pending" || v.RefundWords != "Refund pending: €4.50" {
		p.t.Errorf("the cancelled paid order: %+v, want its refund pending", v)
	}
	p.waitJS("the refund made", fmt.Sprintf(`(() => { document.querySelector("#queue-refresh").click();
		return document.querySelector(%q) !== null; })()`, cardSelector("#queue-list", paid.ID, ".payment[data-refund-status=refunded]")))
	p.waitJS("the refund's history", fmt.Sprintf(`document.querySelector(%q) !== null`, cardSelector("#queue-list", paid.ID, ".timeline-note[data-code=refunded]")))
	v = p.readPay(cardSelector("#queue-list", paid.ID, ".order-details"))
	if v.RefundWords != "Refunded: €4.50" || !strings.HasPrefix(v.RefundID, "re_") || v.Attempts != "1" {
		p.t.Errorf("the refunded order for the operator: %+v, want Stripe's refund id after one attempt", v)
	}
	p.checkPhoneWidth("browser-queue-refund-phone.png")
}

// useLanguage switches the page to lang unless it is in it already.
func (p *pageDriver) useLanguage(lang string) {
	p.t.Helper()
	if eval[string](p, "read the page language", `document.documentElement.lang`) != lang {
		p.run("switch the language", chromedp.Click(chromedp.CSS("#lang-switch")))
		p.waitJS("the page in "+lang, fmt.Sprintf(`document.documentElement.lang === %q`, lang))
	}
}
