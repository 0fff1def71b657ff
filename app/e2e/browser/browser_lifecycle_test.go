package browser

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"companydocs"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// orderCard is what an order's card shows, read from the page.
type orderCard struct {
	Status   string `json:"status"`   // the status code kept in data-status
	Words    string `json:"words"`    // the status as the reader sees it
	Timeline string `json:"timeline"` // "STATUS/actor" per history entry, comma separated
	Times    int    `json:"times"`    // history entries with a readable time
	Notes    string `json:"notes"`
	NextStep string `json:"next_step"`
	StepText string `json:"step_text"`
	Account  string `json:"account"`
	Cancel   bool   `json:"cancel"`
	Download bool   `json:"download"`
	Actions  string `json:"actions"` // class names of the operator's action buttons
}

const readOrderCard = `((list, id) => {
	const li = [...document.querySelectorAll(list + " > li")].find(x => x.dataset.orderId === id);
	if (!li) { return null; }
	const d = li.querySelector(".order-details");
	const entries = [...li.querySelectorAll(".timeline > li")];
	return {
		status: d.dataset.status, words: li.querySelector(".order-status").textContent,
		timeline: entries.map(e => e.dataset.status + "/" + e.dataset.actor).join(","),
		times: entries.filter(e => e.querySelector("time").textContent.trim() !== "").length,
		notes: [...li.querySelectorAll(".timeline-note")].map(n => n.textContent).join(" | "),
		next_step: d.querySelector(".next-step").dataset.kind, step_text: d.querySelector(".next-step").textContent,
		account: (d.querySelector(".order-account") || {textContent: ""}).textContent,
		cancel: li.querySelector(".cancel-order") !== null, download: li.querySelector(".download-order") !== null,
		actions: [...li.querySelectorAll(".order-actions button")].filter(b => !b.closest("[hidden]")).map(b => b.className.split(" ")[0]).join(","),
	};
})(%q, %q)`

// readCard reads the card of an order in a list (#orders-list or #queue-list).
func (p *pageDriver) readCard(list, id string) orderCard {
	p.t.Helper()
	return eval[orderCard](p, "read the card of "+id, fmt.Sprintf(readOrderCard, list, id))
}

// cardSelector finds an element inside the card of an order.
func cardSelector(list, id, inner string) string {
	return fmt.Sprintf(`%s > li[data-order-id=%q] %s`, list, id, inner)
}

// waitStatus waits until the card of an order shows the status.
func (p *pageDriver) waitStatus(list, id, status string) {
	p.t.Helper()
	p.waitJS("order "+id+" shown as "+status, fmt.Sprintf(`document.querySelector(%q) !== null`,
		cardSelector(list, id, fmt.Sprintf(`.order-details[data-status=%q]`, status))))
}

// signInWith signs in with a key; the page then decides on its own whether
// the account is a client or an operator.
func (p *pageDriver) signInWith(key string) {
	p.t.Helper()
	eval[bool](p, "empty the key field", `(() => { document.querySelector("#api-key").value = ""; return true; })()`)
	p.run("sign in",
		chromedp.SendKeys(chromedp.CSS("#api-key"), key),
		chromedp.Click(chromedp.CSS("#signin-button")),
		chromedp.WaitVisible(chromedp.CSS("#signout-button")))
}

// operateOrder is the operator's part: the page shows the queue instead of
// "My orders", and the operator confirms the payment, marks the order
// requested, sees a file that is not a PDF refused in words, and delivers
// the PDF.
func (p *pageDriver) operateOrder(id string, pdf []byte) {
	p.t.Helper()
	p.waitJS("the operator's queue", `!document.querySelector("#queue").hidden && document.querySelector("#orders").hidden`)
	p.waitStatus("#queue-list", id, "PREVIEW_READY")
	if offers := eval[int](p, "count order buttons", `document.querySelectorAll("#results .order-button, #results .order-signin").length`); offers != 0 {
		p.t.Fatalf("an operator is offered %d order buttons; operators do not order", offers)
	}
	card := p.readCard("#queue-list", id)
	if card.Account != "browser-test" || !strings.Contains(card.Words, "Placed") || card.Actions != "pay-order,cancel-order" {
		p.t.Fatalf("queue card = %+v, want the client's account, \"Placed\", and the actions confirm payment and cancel", card)
	}
	p.checkOperatorStep(id)

	p.run("confirm the payment", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", id, ".pay-order"))))
	p.waitStatus("#queue-list", id, "PAID")
	if card = p.readCard("#queue-list", id); !strings.Contains(card.Words, "Paid") || card.Actions != "request-order,fail-order,cancel-order" {
		p.t.Fatalf("paid order in the queue = %+v, want \"Paid\" with mark requested, fail and cancel", card)
	}
	p.run("mark the order requested", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", id, ".request-order"))))
	p.waitStatus("#queue-list", id, "REQUESTED")
	p.checkPhoneWidth("browser-operator-phone.png")

	notPDF := filepath.Join(p.t.TempDir(), "letter.pdf")
	if err := os.WriteFile(notPDF, []byte("Dear operator, this is not a PDF."), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.run("upload a file that is not a PDF",
		chromedp.SetUploadFiles(chromedp.CSS(cardSelector("#queue-list", id, ".deliver-file")), []string{notPDF}),
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", id, ".deliver-order"))))
	errSel := cardSelector("#queue-list", id, ".action-message .message.error")
	p.waitJS("the refused upload explained", fmt.Sprintf(`document.querySelector(%q) !== null`, errSel))
	refused := p.text("read the refusal", errSel)
	if !strings.Contains(refused, "The request was not accepted.") || !strings.Contains(refused, "%PDF-") || strings.Contains(refused, "validation_error") {
		p.t.Fatalf("refused upload shows %q, want words and the service's sentence, no raw code", refused)
	}

	file := filepath.Join(p.t.TempDir(), "register-printout.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.run("upload the PDF",
		chromedp.SetUploadFiles(chromedp.CSS(cardSelector("#queue-list", id, ".deliver-file")), []string{file}),
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", id, ".deliver-order"))))
	p.waitStatus("#queue-list", id, "DELIVERED")
	card = p.readCard("#queue-list", id)
	if card.Timeline != "PREVIEW_READY/client,PAID/operator,REQUESTED/operator,DELIVERED/operator" || card.Times != 4 || card.Actions != "" {
		p.t.Fatalf("delivered order in the queue = %+v, want four timeline entries with times and no actions left", card)
	}
	if card.NextStep != "operator" || !strings.Contains(card.StepText, "Nothing more to do") || strings.Contains(strings.ToLower(card.StepText), "download") {
		p.t.Fatalf("delivered order in the queue says %q (%s), want the operator's \"Nothing more to do\" and no download", card.StepText, card.NextStep)
	}
}

// checkOperatorStep: the queue says the operator's next step, from the
// actions the service lists for the operator, in English and German, not
// the client's ("Pay €4.50 ...").
func (p *pageDriver) checkOperatorStep(id string) {
	p.t.Helper()
	card := p.readCard("#queue-list", id)
	step := strings.ReplaceAll(card.StepText, "\u00a0", " ")
	if card.NextStep != "operator" || !strings.Contains(step, "Confirm the payment of 4.50 EUR once it has arrived") || strings.Contains(step, "Pay ") {
		p.t.Fatalf("a new one-off order in the queue says %q (%s), want the operator's step: confirm the payment of 4.50 EUR", step, card.NextStep)
	}
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)
	p.waitJS("the operator's step said in German", fmt.Sprintf(`document.querySelector(%q).lang === "de"`,
		cardSelector("#queue-list", id, ".operator-step .next-step-text")))
	card = p.readCard("#queue-list", id)
	p.run("switch back to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in English", `document.documentElement.lang === "en"`)
	if step = strings.ReplaceAll(card.StepText, "\u00a0", " "); !strings.Contains(step, "Ihr nächster Schritt: Bestätigen Sie die Zahlung von 4,50 EUR") {
		p.t.Fatalf("the operator's step in German = %q, want \"Ihr nächster Schritt: Bestätigen Sie die Zahlung von 4,50 EUR\"", step)
	}
}

// checkDelivered is the client back on the page: the order is delivered,
// in words in English and German, with a download and no cancel.
func (p *pageDriver) checkDelivered(id string) {
	p.t.Helper()
	p.waitStatus("#orders-list", id, "DELIVERED")
	card := p.readCard("#orders-list", id)
	if !strings.Contains(card.Words, "Delivered") || card.NextStep != "download" || !strings.Contains(card.StepText, "Delivered: the document is ready to download") ||
		!card.Download || card.Cancel || !strings.Contains(card.Timeline, "DELIVERED/operator") {
		p.t.Fatalf("delivered order for the client = %+v, want \"Delivered\", the service's next step, a download and no cancel", card)
	}
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	// the service says the order's sentences again, in German
	p.waitJS("the history said in German", fmt.Sprintf(`[...document.querySelectorAll(%q)].every(n => n.lang === "de")`,
		cardSelector("#orders-list", id, ".timeline-note")))
	card = p.readCard("#orders-list", id)
	button := p.text("read the download button", cardSelector("#orders-list", id, ".download-order"))
	timeline := p.text("read the timeline", cardSelector("#orders-list", id, ".timeline"))
	if !strings.Contains(card.Words, "Geliefert") || button != "Dokument herunterladen (PDF)" || !strings.Contains(timeline, "von dem Betreiber") {
		p.t.Fatalf("German delivered order: status %q, button %q, timeline %q", card.Words, button, timeline)
	}
	// the service's notes in the history are said in German from their codes
	for _, want := range []string{"Bestellung angelegt.", "Zahlung vom Betreiber bestätigt.", "Beim Register angefordert.", "Geliefert."} {
		if !strings.Contains(card.Notes, want) || strings.Contains(card.Notes, "Order created") {
			p.t.Errorf("German history notes %q, want %q among them and no English", card.Notes, want)
		}
	}
	p.run("switch back to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.checkPhoneWidth("browser-delivered-phone.png")
}

// downloadDocument presses the download button and lets Chromium save the
// file into a directory of the test: the saved bytes must be the upload.
func (p *pageDriver) downloadDocument(id string, pdf []byte) {
	p.t.Helper()
	saved := p.download(cardSelector("#orders-list", id, ".download-order"))
	if got, want := sha256.Sum256(saved), sha256.Sum256(pdf); got != want {
		p.t.Fatalf("downloaded %d bytes with SHA-256 %x, uploaded %d bytes with %x", len(saved), got, len(pdf), want)
	}
	p.waitJS("the download reported", fmt.Sprintf(`document.querySelector(%q) !== null`, cardSelector("#orders-list", id, ".action-message .status")))
	if said := p.text("read the download message", cardSelector("#orders-list", id, ".action-message .status")); !strings.Contains(said, ".pdf") {
		p.t.Fatalf("download message %q does not name the PDF file", said)
	}
}

// download presses the button of selector, lets Chromium save the file
// into a directory of the test and returns its bytes (nil when Chromium
// reports no completed download).
func (p *pageDriver) download(selector string) []byte {
	p.t.Helper()
	dir := p.t.TempDir()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	enabled := true
	err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &enabled,
			})
			return err
		}),
		chromedp.Click(chromedp.CSS(selector)))
	if err != nil {
		p.fail("press the download button", err)
	}
	for ev, err := range progress {
		if err != nil {
			p.fail("wait for the download", err)
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			p.t.Fatalf("Chromium cancelled the download of %s", selector)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			saved, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				p.t.Fatalf("read the downloaded file: %v", err)
			}
			return saved
		}
	}
	return nil
}

// reorderAndCancel orders the same again (the first order is delivered,
// so it no longer blocks) and cancels the new order after confirming.
func (p *pageDriver) reorderAndCancel(delivered string) {
	p.t.Helper()
	again := p.orderPlan("ad-single")
	if again.Kind != "ok" || again.ID == delivered || again.Status != "PREVIEW_READY" {
		p.t.Fatalf("order after delivery = %+v, want a new order (the delivered one no longer blocks)", again)
	}
	p.waitStatus("#orders-list", again.ID, "PREVIEW_READY")
	p.run("ask to cancel", chromedp.Click(chromedp.CSS(cardSelector("#orders-list", again.ID, ".cancel-order"))))
	question := p.text("read the question", cardSelector("#orders-list", again.ID, ".confirm-question"))
	if !strings.Contains(question, "Cancel this order?") || p.readCard("#orders-list", again.ID).Status != "PREVIEW_READY" {
		p.t.Fatalf("the first press cancelled or asked %q; want a question and the order unchanged", question)
	}
	p.run("confirm the cancellation", chromedp.Click(chromedp.CSS(cardSelector("#orders-list", again.ID, ".cancel-order-yes"))))
	p.waitStatus("#orders-list", again.ID, "CANCELLED")
	card := p.readCard("#orders-list", again.ID)
	if !strings.Contains(card.Words, "Cancelled") || card.Timeline != "PREVIEW_READY/client,CANCELLED/client" || card.Cancel || card.NextStep != "none" {
		p.t.Fatalf("cancelled order = %+v, want \"Cancelled\" by the client, no cancel button, no next step", card)
	}
}

// minimalPDF builds a small valid one-page PDF showing text, with a
// correct cross-reference table, as a register's printout would be.
func minimalPDF(text string) []byte {
	content := fmt.Sprintf("BT /F1 18 Tf 72 720 Td (%s) Tj ET", text)
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, obj := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// orderPlan orders the exact card's company with a plan and returns what
// the page shows of the new order.
func (p *pageDriver) orderPlan(plan string) orderState {
	p.t.Helper()
	return p.orderPlanDocument(plan, "")
}

// orderPlanDocument orders a document of the exact card's company with a
// plan; without a document, the one the page chooses.
func (p *pageDriver) orderPlanDocument(plan, document string) orderState {
	p.t.Helper()
	if eval[bool](p, "is the order panel open", `!document.querySelector("#order-panel").hidden`) {
		p.run("close the order panel", chromedp.Click(chromedp.CSS("#order-result button")), chromedp.WaitNotVisible(chromedp.CSS("#order-panel")))
	}
	p.run("open the order panel",
		clickAgainIfReplaced("#results > li.card .order-button"),
		chromedp.WaitVisible(chromedp.CSS("#order-panel")))
	eval[string](p, "choose the plan "+plan, fmt.Sprintf(`(() => { const s = document.querySelector("#order-plan");
		s.value = %q; s.dispatchEvent(new Event("change")); return s.value; })()`, plan))
	if document != "" {
		eval[string](p, "choose the document "+document, fmt.Sprintf(`(() => { const s = document.querySelector("#order-document");
			s.value = %q; s.dispatchEvent(new Event("change")); return s.value; })()`, document))
	}
	p.waitJS("a preview without blockers", `document.querySelector("#preview .message.ok") !== null && !document.querySelector("#order-confirm").disabled`)
	p.run("confirm the order", chromedp.Click(chromedp.CSS("#order-confirm")))
	p.waitJS("the order outcome", `document.querySelector("#order-result [data-kind]") !== null`)
	return eval[orderState](p, "read the order", readOrder)
}

// failAndCancel is the operator's other two answers: one order fails with
// a reason (none given is refused in the page), another is cancelled with
// a note; the client reads both in the timeline.
func (p *pageDriver) failAndCancel(operatorKey, clientKey string) {
	p.t.Helper()
	failing := p.orderPlan("ad-single").ID
	cancelled := p.orderPlan("cd-single").ID
	p.signOut()
	p.signInWith(operatorKey)
	p.waitStatus("#queue-list", failing, "PREVIEW_READY")
	p.waitStatus("#queue-list", cancelled, "PREVIEW_READY")

	p.run("confirm the payment", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", failing, ".pay-order"))))
	p.waitStatus("#queue-list", failing, "PAID")
	p.run("fail without a reason", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", failing, ".fail-order"))))
	errSel := cardSelector("#queue-list", failing, ".action-message .message.error")
	p.waitJS("the missing reason explained", fmt.Sprintf(`document.querySelector(%q) !== null`, errSel))
	if said := p.text("read the refusal", errSel); !strings.Contains(said, "Enter the reason first") || p.readCard("#queue-list", failing).Status != "PAID" {
		p.t.Fatalf("failing without a reason: page says %q; want it refused in words and the order still PAID", said)
	}
	const reason = "The register court does not answer."
	p.run("fail with a reason",
		chromedp.SendKeys(chromedp.CSS(cardSelector("#queue-list", failing, ".fail-reason")), reason),
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", failing, ".fail-order"))))
	p.waitStatus("#queue-list", failing, "FAILED")

	const note = "Ordered twice by mistake."
	p.run("cancel with a note",
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", cancelled, ".cancel-order"))),
		chromedp.SendKeys(chromedp.CSS(cardSelector("#queue-list", cancelled, ".cancel-note")), note),
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", cancelled, ".cancel-order-yes"))))
	p.waitStatus("#queue-list", cancelled, "CANCELLED")
	p.checkPhoneWidth("browser-queue-phone.png")

	p.signOut()
	p.signInWith(clientKey)
	p.waitStatus("#orders-list", failing, "FAILED")
	failed := p.readCard("#orders-list", failing)
	if !strings.Contains(failed.Words, "Failed") || !strings.Contains(failed.Notes, reason) || failed.NextStep != "none" ||
		failed.Timeline != "PREVIEW_READY/client,PAID/operator,FAILED/operator" || failed.Cancel {
		p.t.Fatalf("failed order for the client = %+v, want \"Failed\" with the operator's reason in the timeline", failed)
	}
	p.waitStatus("#orders-list", cancelled, "CANCELLED")
	if c := p.readCard("#orders-list", cancelled); !strings.Contains(c.Notes, note) || c.Timeline != "PREVIEW_READY/client,CANCELLED/operator" {
		p.t.Fatalf("order cancelled by the operator = %+v, want the note in the timeline", c)
	}
}

// checkPhoneManyOrders is the signed-in client on a phone with several
// orders, one delivered (with its download button), one failed, some
// cancelled and a new one; first with the order panel showing the placed
// order, then with a preview that names a blocker.
func (p *pageDriver) checkPhoneManyOrders(delivered string) {
	p.t.Helper()
	placed := p.orderPlan("ad-single")
	p.waitStatus("#orders-list", placed.ID, "PREVIEW_READY")
	p.waitStatus("#orders-list", delivered, "DELIVERED")
	if n := eval[int](p, "count the orders", `document.querySelectorAll("#orders-list > li").length`); n < 5 {
		p.t.Fatalf("the orders list shows %d orders, want at least 5 for the phone check", n)
	}
	p.checkPhoneWidth("browser-orders-phone.png")
	p.run("open the order panel again",
		chromedp.Click(chromedp.CSS("#order-result button")), chromedp.WaitNotVisible(chromedp.CSS("#order-panel")),
		clickAgainIfReplaced("#results > li.card .order-button"), chromedp.WaitVisible(chromedp.CSS("#order-panel")))
	p.waitJS("the first preview", `document.querySelector("#preview .message") !== null`)
	eval[string](p, "choose the credit plan", `(() => { const s = document.querySelector("#order-plan");
		s.value = "subscription-basic"; s.dispatchEvent(new Event("change")); return s.value; })()`)
	p.waitJS("the blocked preview", `document.querySelector("#preview [data-code=insufficient_credits]") !== null`)
	p.checkPhoneWidth("browser-blocked-phone.png")
}

// stepView is one order's next step as the page shows it.
type stepView struct {
	Code string `json:"code"`
	Lang string `json:"lang"`
	Text string `json:"text"`
}

// checkStepsInWords reads the next step of every order of the client in
// German: each is said in German from its code and params, with no
// status code, API path or code name in it.
func (p *pageDriver) checkStepsInWords() {
	p.t.Helper()
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)
	p.waitJS("the next steps said in German", `[...document.querySelectorAll("#orders-list .next-step span[lang]")].every(n => n.lang === "de")`)
	steps := eval[[]stepView](p, "read the next steps", `[...document.querySelectorAll("#orders-list .next-step")].map(s => ({
		code: s.dataset.code, lang: (s.querySelector("span[lang]") || {lang: ""}).lang, text: s.textContent}))`)
	p.run("switch back to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	codes := map[string]string{}
	for _, s := range steps {
		s.Text = strings.ReplaceAll(s.Text, "\u00a0", " ")
		codes[s.Code] += s.Text + " | "
		if s.Lang != "de" {
			p.t.Errorf("next step %q (%s) is not said in German", s.Text, s.Code)
		}
		for _, raw := range append([]string{"/api/", "GET ", "POST ", "_"}, companydocs.OrderStatuses...) {
			if strings.Contains(strings.ReplaceAll(s.Text, "ord_", ""), raw) {
				p.t.Errorf("next step %q contains %q", s.Text, raw)
			}
		}
	}
	// The operator's note is shown as written; the service's default note
	// ("Cancelled by the client.") is English and is not repeated.
	for _, want := range [][2]string{
		{"payment_due", "Zahlen Sie 4,50 EUR für die Bestellung ord_"},
		{"delivered", "Geliefert: Das Dokument kann heruntergeladen werden."},
		{"failed", "Grund: „The register court does not answer.“ Die Zahlung von 4,50 EUR erstattet der Betreiber"},
		{"cancelled", "Die Bestellung ist storniert. „Ordered twice by mistake.“ |"},
		{"cancelled", "Die Bestellung ist storniert. |"},
	} {
		if !strings.Contains(codes[want[0]], want[1]) {
			p.t.Errorf("next steps %s in German = %q, want one to read %q", want[0], codes[want[0]], want[1])
		}
	}
}
