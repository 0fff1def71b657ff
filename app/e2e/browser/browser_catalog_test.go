package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/internal/realdata"
	"companydocs/messages"

	"github.com/chromedp/chromedp"
)

// TestBrowserGermanSaysNoEnglish runs the page in German on a 375 px
// phone through a client's orders, a client's cancel note (sent through
// the API: the page's cancel takes none), the operator's queue, an
// operator's cancel note and a refused upload: every sentence it shows
// comes from the message catalog in German (the refusal too, which the
// service says in the language the page asks for), and a person's note is
// quoted as theirs, never spliced into a sentence.
func TestBrowserGermanSaysNoEnglish(t *testing.T) {
	chrome := browserExecutable(t)
	m := startBrowserServer(t, realdata.Path(t, "offeneregister", "fixtures_665.jsonl"))
	clientKey, operatorKey := clientAndOperator(t, m, "katalog-kunde", "katalog-betrieb")
	p := &pageDriver{t: t, ctx: newBrowser(t, chrome)}
	p.openOnPhone(m)
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)

	p.typeClue("Rheinbahn AG Düsseldorf")
	p.waitJS("results for Rheinbahn", `document.querySelectorAll("#results > li.card").length > 0`)
	p.signInWith(clientKey)
	p.waitJS("order button on the exact card", `document.querySelector("#results > li.card .order-button") !== null`)
	operated := p.orderPlan("ad-single").ID
	withdrawn := p.orderPlan("cd-single").ID
	p.noEnglish("a client's orders")

	p.run("watch the company", clickAgainIfReplaced("#results > li.card .watch-button"))
	p.waitJS("the watch list holds it", `document.querySelectorAll("#watches-list > li").length === 1`)
	p.noEnglish("the watch list")

	p.run("paste a table", chromedp.Focus(chromedp.CSS("#many-text")),
		pasteText("Firma\tOrt\nRheinbahn AG\tDüsseldorf\nRheinbahn\tKöln\nMüller GmbH\tKöln"))
	p.waitJS("the table read", `document.querySelector("#many-read").textContent.startsWith("3 ")`)
	p.run("find the companies", chromedp.Click(chromedp.CSS("#many-start")))
	p.waitJS("every row answered", `document.querySelector("#many-status").textContent.startsWith("3 Zeilen gesucht")`)
	p.run("open a review", chromedp.Click(chromedp.CSS("#many-rows .review-button")))
	p.waitJS("the review open", `document.querySelector("#many-rows .review") !== null`)
	p.noEnglish("many companies")
	p.fitsPhone("browser-catalog-many-de.png")

	const note = "Doch nicht nötig, danke."
	if _, err := m.Ordering.Orders.CancelOrder(context.Background(), "katalog-kunde", withdrawn, note); err != nil {
		t.Fatalf("cancel with a note: %v", err)
	}
	p.run("refresh the orders", chromedp.Click(chromedp.CSS("#orders-refresh")))
	p.waitStatus("#orders-list", withdrawn, "CANCELLED")
	card := p.readCard("#orders-list", withdrawn)
	quoted := strings.TrimSpace(messages.Say(messages.German, "note.quoted", messages.Args{"text": note}))
	if !strings.Contains(card.StepText, "Die Bestellung ist storniert. "+quoted) || !strings.Contains(card.Notes, note) {
		t.Errorf("cancelled order = %+v, want the client's note quoted (%s) after the German sentence", card, quoted)
	}
	p.noEnglish("a client's cancel note")
	p.fitsPhone("browser-catalog-client-de.png")
	cancelled := p.orderPlan("cd-single").ID // the withdrawn order's slot is free again

	p.run("sign out", chromedp.Click(chromedp.CSS("#signout-button")), chromedp.WaitVisible(chromedp.CSS("#api-key")))
	p.signInWith(operatorKey)
	p.waitJS("the operator's queue", `!document.querySelector("#queue").hidden && document.querySelector("#orders").hidden`)
	if heading, want := p.text("read the queue heading", "#queue-heading"), germanPageText(p, "queue.heading"); heading != want || want == "" {
		t.Errorf("queue heading %q, want the German words %q", heading, want)
	}
	p.waitStatus("#queue-list", operated, "PREVIEW_READY")
	p.run("confirm the payment", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", operated, ".pay-order"))))
	p.waitStatus("#queue-list", operated, "PAID")
	p.run("mark the order requested", chromedp.Click(chromedp.CSS(cardSelector("#queue-list", operated, ".request-order"))))
	p.waitStatus("#queue-list", operated, "REQUESTED")
	p.noEnglish("the operator's queue")

	const operatorNote = "Bitte neu bestellen, sobald das Register wieder antwortet"
	p.run("cancel with a note",
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", cancelled, ".cancel-order"))),
		chromedp.SendKeys(chromedp.CSS(cardSelector("#queue-list", cancelled, ".cancel-note")), operatorNote),
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", cancelled, ".cancel-order-yes"))))
	p.waitStatus("#queue-list", cancelled, "CANCELLED")
	quoted = strings.TrimSpace(messages.Say(messages.German, "note.quoted", messages.Args{"text": operatorNote}))
	// the queue says the operator's next step; the note is in the history
	if card := p.readCard("#queue-list", cancelled); !strings.Contains(card.Notes, quoted) {
		t.Errorf("order cancelled by the operator = %+v, want the note quoted (%s) in its history", card, quoted)
	}
	p.noEnglish("an operator's cancel note")

	notPDF := filepath.Join(t.TempDir(), "brief.pdf")
	if err := os.WriteFile(notPDF, []byte("Sehr geehrte Damen und Herren, dies ist kein PDF."), 0o644); err != nil {
		t.Fatal(err)
	}
	p.run("upload a file that is not a PDF",
		chromedp.SetUploadFiles(chromedp.CSS(cardSelector("#queue-list", operated, ".deliver-file")), []string{notPDF}),
		chromedp.Click(chromedp.CSS(cardSelector("#queue-list", operated, ".deliver-order"))))
	errSel := cardSelector("#queue-list", operated, ".action-message .message.error")
	p.waitJS("the refused upload explained", fmt.Sprintf(`document.querySelector(%q) !== null`, errSel))
	refused := p.text("read the refusal", errSel)
	for _, want := range []string{
		messages.Say(messages.German, "error.validation_error", nil),
		messages.Say(messages.German, "refusal.not_a_pdf", messages.Args{"magic": "%PDF-"}),
	} {
		if !strings.Contains(refused, want) {
			t.Errorf("refused upload in German shows %q, want %q in it", refused, want)
		}
	}
	if lang := eval[string](p, "read the refusal's language", fmt.Sprintf(`document.querySelector(%q).lang`, errSel+" .detail span")); lang != "de" {
		t.Errorf("the service's sentence in the refusal is marked lang %q, want de", lang)
	}
	p.noEnglish("a refused upload")
	p.fitsPhone("browser-catalog-queue-de.png")
}

// readTexts makes the page's texts (its own labels and the catalog merged
// in, as the page has them) readable as window.pageTexts: importing the
// module i18n.js again gives the page's own instance of it.
func (p *pageDriver) readTexts() {
	p.t.Helper()
	eval[bool](p, "import the page's texts", `window.pageTexts !== undefined ||
		(import("/static/i18n.js").then(m => m.textsReady.then(() => { window.pageTexts = m.texts; })), true)`)
	p.waitJS("the page's texts", `window.pageTexts !== undefined`)
}

// germanPageText is the page's German words for a key, placeholders unfilled.
func germanPageText(p *pageDriver, key string) string {
	p.t.Helper()
	p.readTexts()
	return eval[string](p, "read the German words for "+key, fmt.Sprintf(`window.pageTexts.de[%q] || ""`, key))
}

// englishOnPage finds English on the German page: every stretch of three
// or more words between the placeholders of an English text (the page's
// own and the catalog's, merged) that differs from its German, and every
// element marked lang=en other than the language switch.
const englishOnPage = `(() => {
	const texts = window.pageTexts, shown = document.body.innerText, found = [];
	for (const [key, en] of Object.entries(texts.en)) {
		if (texts.de[key] === en) { continue; }
		for (const part of en.split(/\{\w+\}/)) {
			const words = part.trim().replace(/^[^\p{L}]+|[^\p{L}]+$/gu, "");
			if (words.split(/\s+/).length >= 3 && shown.includes(words)) { found.push(key + ": " + JSON.stringify(words)); }
		}
	}
	for (const e of document.querySelectorAll("body [lang=en]")) {
		if (e.id !== "lang-switch" && e.offsetParent !== null && e.textContent.trim() !== "") {
			found.push("lang=en: " + JSON.stringify(e.textContent.trim().slice(0, 80)));
		}
	}
	return found;
})()`

// noEnglish fails the test when the German page shows English.
func (p *pageDriver) noEnglish(where string) {
	p.t.Helper()
	if lang := eval[string](p, "read the page language", `document.documentElement.lang`); lang != "de" {
		p.t.Fatalf("%s: the page is in %q, want de", where, lang)
	}
	p.readTexts()
	if n := eval[int](p, "count the catalog's sentences", `Object.keys(window.pageTexts.de).filter(k => k.startsWith("refusal.")).length`); n == 0 {
		p.t.Fatalf("%s: the page did not read the message catalog", where)
	}
	if found := eval[[]string](p, "look for English on the German page", englishOnPage); len(found) > 0 {
		p.t.Errorf("%s: the German page shows English:\n%s", where, strings.Join(found, "\n"))
	}
}
