package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/app"
	"companydocs/data"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/internal/realdata"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/chromedp"
)

// browserSampleRecords bounds how much of the embedded sample the browser
// test ingests (enough for other companies with the same register number);
// the fixture file adds the hand-checked records it searches.
const browserSampleRecords = 1000

// TestBrowserPage drives the web page in headless Chromium against the real
// server on real register records: search, labels and reasons, a pasted
// imprint with the lines used and set aside, sign-in,
// preview with blockers, order, duplicate, orders list, language, sign-out;
// then the order's life: an operator confirms the payment, marks it
// requested and uploads a PDF, the client sees it delivered (in English
// and German), downloads exactly the uploaded bytes, orders again and
// cancels; an operator fails one order with a reason and cancels another
// with a note, and the client reads both.
func TestBrowserPage(t *testing.T) {
	chrome := browserExecutable(t)
	fixtures := realdata.Path(t, "offeneregister", "fixtures_665.jsonl")
	m := startBrowserServer(t, fixtures)
	base := "http://" + m.Addr() + "/"
	checkPageHeaders(t, base)

	key, err := m.Accounts.CreateAccount("browser-test", 0)
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	operatorKey, err := m.Accounts.CreateAccountWithRole("browser-operator", companydocs.RoleOperator, 0)
	if err != nil {
		t.Fatalf("create operator account: %v", err)
	}
	ctx := newBrowser(t, chrome)
	p := &pageDriver{t: t, ctx: ctx}

	p.run("open the page", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#query")))
	p.waitJS("the page script started", `document.body.dataset.ready === "true"`)
	p.useEnglish()
	p.searchRegisterNumber()
	p.typeNewClueClearsResults()
	p.searchRheinbahn()
	p.pasteImprint()
	p.signIn(key)
	p.waitJS("the balance shows", `document.querySelector("#account-credits").textContent === "Credits: 0"`)
	orderID := p.orderAndDuplicate()
	p.checkOrdersList(orderID)
	p.checkBlockersInWords()
	p.checkGerman()
	p.checkPhoneWidth("browser-phone.png")
	p.signOut()

	pdf := minimalPDF("companydocs browser test")
	p.signInWith(operatorKey)
	p.operateOrder(orderID, pdf)
	p.signOut()
	p.signInWith(key)
	p.checkDelivered(orderID)
	p.downloadDocument(orderID, pdf)
	p.reorderAndCancel(orderID)
	p.failAndCancel(operatorKey, key)
	p.checkPhoneManyOrders(orderID)
	p.checkStepsInWords()
}

// stepTimeout bounds one browser step, so that a page that never gets to
// the expected state fails the step instead of hanging the test.
const stepTimeout = 20 * time.Second

// pageDriver runs the browser steps of one test and fails it with the
// name of the step that went wrong.
type pageDriver struct {
	t   *testing.T
	ctx context.Context
}

func (p *pageDriver) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.fail(step, err)
	}
}

// clickAgainIfReplaced is chromedp.Click on the first node matching sel,
// tried again when the page replaced that node between the query and the
// click (the results re-rendered by an answer that came in meanwhile):
// nothing was clicked then.
func clickAgainIfReplaced(sel string) chromedp.Action[chromedp.Void] {
	return againIfReplaced(func() chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) })
}

// againIfReplaced runs the query action newAction makes, and a new one
// again as long as the page replaced the node the query found before the
// action reached it (a refresh still in flight re-drew it), until the
// step's time is up.
func againIfReplaced[T any](newAction func() chromedp.Action[T]) chromedp.Action[T] {
	return func(ctx context.Context, t *chromedp.Target) (T, error) {
		for {
			v, err := newAction()(ctx, t)
			if !nodeReplaced(err) || ctx.Err() != nil {
				return v, err
			}
		}
	}
}

// nodeReplaced reports whether a step failed because Chromium knows no
// node of the id the step's query found: the page replaced it in
// between. The message depends on the call (a click's, a read's).
func nodeReplaced(err error) bool {
	var cdpErr *cdproto.Error
	return errors.As(err, &cdpErr) && (cdpErr.Message == "Could not find node with given id" || cdpErr.Message == "No node with given id found")
}

// value runs one action that reads something from the page.
func value[T any](p *pageDriver, step string, action chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		p.fail(step, err)
	}
	return v
}

// fail ends the test at a failed step, with what the page showed then.
func (p *pageDriver) fail(step string, err error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
	p.t.Fatalf("%s: %v\npage text:\n%s", step, err, shown)
}

// eval runs a JavaScript expression on the page and decodes its value.
func eval[T any](p *pageDriver, step, expr string) T {
	p.t.Helper()
	return value(p, step, chromedp.Evaluate[T](expr))
}

// waitJS waits until a JavaScript condition holds on the page.
func (p *pageDriver) waitJS(step, cond string) {
	p.t.Helper()
	value(p, step, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout)))
}

// text reads the visible text of the first element a CSS selector finds,
// again when the page re-drew that element meanwhile.
func (p *pageDriver) text(step, selector string) string {
	p.t.Helper()
	read := func() chromedp.Action[string] { return chromedp.Text(chromedp.CSS(selector), chromedp.NodeVisible) }
	return strings.TrimSpace(value(p, step, againIfReplaced(read)))
}

func (p *pageDriver) useEnglish() {
	p.t.Helper()
	if eval[string](p, "read the page language", `document.documentElement.lang`) != "en" {
		p.run("switch to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	}
	if got := p.text("read the search heading", "#search-heading"); got != "Search" {
		p.t.Fatalf("search heading in English = %q, want %q", got, "Search")
	}
}

// cardView is what a result card shows, read from the page.
type cardView struct {
	Name      string   `json:"name"`
	Label     string   `json:"label"`
	Badge     string   `json:"badge"`
	Reasons   []string `json:"reasons"`
	Orderable string   `json:"orderable"`
	Mark      string   `json:"mark"`
	Facts     string   `json:"facts"`
	Meter     string   `json:"meter"`
	Action    string   `json:"action"`
}

const readCards = `[...document.querySelectorAll("#results > li.card")].map(li => ({
	name: li.querySelector("h3").textContent,
	label: li.querySelector(".badge").dataset.label,
	badge: li.querySelector(".badge").textContent,
	reasons: [...li.querySelectorAll(".reasons li")].map(x => x.textContent),
	orderable: li.querySelector(".orderable").dataset.orderable,
	mark: li.querySelector(".orderable").textContent,
	facts: li.querySelector(".facts").textContent,
	meter: li.querySelector("[role=meter]").getAttribute("aria-valuenow"),
	action: (li.querySelector("button") || {textContent: ""}).textContent,
}))`

func (p *pageDriver) cards() []cardView {
	p.t.Helper()
	return eval[[]cardView](p, "read the result cards", readCards)
}

// typeClue replaces the search box's text by typing, as a person would.
func (p *pageDriver) typeClue(clue string) {
	p.t.Helper()
	eval[bool](p, "empty the search box", `(() => { const q = document.querySelector("#query");
		q.value = ""; q.dispatchEvent(new Event("input")); return true; })()`)
	p.run("type "+clue, chromedp.SendKeys(chromedp.CSS("#query"), clue))
}

func (p *pageDriver) searchRegisterNumber() {
	p.t.Helper()
	p.typeClue("HRB 562 Düsseldorf")
	p.waitJS("results for HRB 562", `document.querySelector("#understanding").textContent.includes("HRB 562")`)
	understood := p.text("read the understanding line", "#understanding")
	if !strings.Contains(understood, "register number HRB 562 at the register court Düsseldorf") {
		p.t.Fatalf("understanding line = %q, want the register reference with its court", understood)
	}
	cards := p.cards()
	if cards[0].Name != "Rheinbahn AG" || cards[0].Label != "exact" || cards[0].Badge != "Exact match" {
		p.t.Fatalf("top card for HRB 562 Düsseldorf = %+v, want Rheinbahn AG with the exact badge", cards[0])
	}
	if len(cards[0].Reasons) == 0 || cards[0].Orderable != "true" || cards[0].Meter == "" {
		p.t.Fatalf("top card lacks reasons, orderable mark or confidence: %+v", cards[0])
	}
	if !slices.Contains(cards[0].Reasons, "Register number HRB 562 matches") || !slices.Contains(cards[0].Reasons, "Register court Düsseldorf matches") {
		p.t.Errorf("top card's reasons %q, want the register number and court said from their codes", cards[0].Reasons)
	}
	if cards[0].Action != "Sign in to order" {
		p.t.Fatalf("signed-out orderable card offers %q, want %q", cards[0].Action, "Sign in to order")
	}
}

// typeNewClueClearsResults changes the clue: the moment it changes, the
// cards of the previous clue must be gone, before any new answer arrives.
func (p *pageDriver) typeNewClueClearsResults() {
	p.t.Helper()
	p.run("change the clue", chromedp.SendKeys(chromedp.CSS("#query"), "x"))
	left := eval[int](p, "count cards after typing", `document.querySelectorAll("#results > li").length + (document.querySelector("#understanding").hidden ? 0 : 1)`)
	if left != 0 {
		p.t.Fatalf("%d stale result elements stayed on screen after the clue changed", left)
	}
}

// searchRheinbahn searches by name and seat: one exact card, and weaker
// cards that say why they cannot be ordered.
func (p *pageDriver) searchRheinbahn() {
	p.t.Helper()
	p.typeClue("Rheinbahn AG Düsseldorf")
	p.waitJS("results for Rheinbahn", `document.querySelector("#search-status").textContent.includes("Rheinbahn AG Düsseldorf") &&
		document.querySelectorAll("#results > li.card").length > 0`)
	cards := p.cards()
	top := cards[0]
	if top.Name != "Rheinbahn AG" || top.Label != "exact" || len(top.Reasons) == 0 || top.Orderable != "true" {
		p.t.Fatalf("top card = %+v, want Rheinbahn AG, exact, orderable, with reasons", top)
	}
	if !strings.Contains(top.Facts, "HRB 562") || !strings.Contains(top.Facts, "Düsseldorf") {
		p.t.Fatalf("top card facts %q lack register number HRB 562 and Düsseldorf", top.Facts)
	}
	for _, c := range cards[1:] {
		if c.Label == "exact" {
			p.t.Fatalf("a second exact card %q: at most one candidate may be exact", c.Name)
		}
	}
	for _, c := range cards {
		if c.Orderable == "false" && !strings.Contains(c.Mark, "Not orderable (") {
			p.t.Errorf("card %q is not orderable but does not say why: %q", c.Name, c.Mark)
		}
	}
	understood := p.text("read the understanding line", "#understanding")
	if !strings.Contains(understood, "Understood as:") || !strings.Contains(understood, "legal form AG") {
		p.t.Fatalf("understanding line = %q, want the legal form AG named", understood)
	}
	// The words as typed, not the folded tokens the service matches on.
	if !strings.Contains(understood, "“Rheinbahn") || strings.Contains(understood, "rheinbahn") || strings.Contains(understood, "duesseldorf") {
		p.t.Fatalf("understanding line = %q, want the name words as typed (Rheinbahn, Düsseldorf), not folded", understood)
	}
}

func (p *pageDriver) signIn(key string) {
	p.t.Helper()
	p.run("ask to sign in from the card", clickAgainIfReplaced("#results > li.card .order-signin"))
	if focused := eval[string](p, "read the focused element", `document.activeElement.id`); focused != "api-key" {
		p.t.Fatalf("\"Sign in to order\" moved focus to %q, want the API key field", focused)
	}
	p.run("sign in with a wrong key",
		chromedp.SendKeys(chromedp.CSS("#api-key"), "cdk_not-a-key"),
		chromedp.Click(chromedp.CSS("#signin-button")))
	p.waitJS("the wrong key explained", `document.querySelector("#account-status.error") !== null`)
	refused := p.text("read the sign-in message", "#account-status")
	invalid := eval[string](p, "read the key field", `document.querySelector("#api-key").getAttribute("aria-invalid") || ""`)
	if !strings.Contains(refused, "API key is not known") || invalid != "true" {
		p.t.Fatalf("wrong key: message %q, aria-invalid %q; want the key refused in words and the field marked", refused, invalid)
	}
	eval[bool](p, "empty the key field", `(() => { document.querySelector("#api-key").value = ""; return true; })()`)
	p.run("sign in",
		chromedp.SendKeys(chromedp.CSS("#api-key"), key),
		chromedp.Click(chromedp.CSS("#signin-button")),
		chromedp.WaitVisible(chromedp.CSS("#signout-button")))
	type sessionPlace struct {
		Stored bool   `json:"stored"`
		Cookie string `json:"cookie"`
		URL    string `json:"url"`
		Key    string `json:"key"`
	}
	where := eval[sessionPlace](p, "inspect where the session lives", `({
		stored: JSON.parse(sessionStorage.getItem("companydocs.session") || "{}").token !== undefined,
		cookie: document.cookie, url: location.href, key: document.querySelector("#api-key").value})`)
	if !where.Stored || where.Cookie != "" || strings.Contains(where.URL, "token") || where.Key != "" {
		p.t.Fatalf("session storage = %+v: want the token in sessionStorage only and the key field emptied", where)
	}
	p.waitJS("order button on the exact card", `document.querySelector("#results > li.card .order-button") !== null`)
	if !eval[bool](p, "read the focused element", `document.activeElement.matches("#results > li.card .order-button")`) {
		p.t.Fatal("after signing in, focus did not return to the card that asked for it")
	}
}

// orderState is the order panel's outcome, read from the page.
type orderState struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	NextStep string `json:"next_step"`
	StepText string `json:"step_text"`
	Status   string `json:"status"`
	Words    string `json:"words"`
	Workflow string `json:"workflow"`
}

const readOrder = `(() => { const r = document.querySelector("#order-result [data-kind]");
	const d = r.querySelector(".order-details"); return {
	kind: r.dataset.kind, id: d.dataset.orderId,
	next_step: d.querySelector(".next-step").dataset.kind, step_text: d.querySelector(".next-step").textContent,
	status: d.querySelector(".order-status").dataset.status, words: d.querySelector(".order-status").textContent,
	workflow: d.querySelector(".order-workflow").textContent}; })()`

// placeOrder opens the order panel on the exact card, waits for the
// preview of the default plan and confirms it. With open set, the preview
// must name the open order and offer to show it instead.
func (p *pageDriver) placeOrder(open bool) orderState {
	p.t.Helper()
	p.run("open the order panel",
		clickAgainIfReplaced("#results > li.card .order-button"),
		chromedp.WaitVisible(chromedp.CSS("#order-panel")))
	focused := eval[string](p, "read the focused element", `document.activeElement.id`)
	if focused != "order-heading" {
		p.t.Fatalf("focus after opening the order panel is on %q, want the panel heading", focused)
	}
	p.waitJS("a preview", `document.querySelector("#preview .message") !== null && !document.querySelector("#order-confirm").disabled`)
	if total := p.text("read the estimated total", "#preview .total"); !strings.Contains(total, "4.50") {
		p.t.Fatalf("estimated total = %q, want the plan price 4.50", total)
	}
	button := p.text("read the confirm button", "#order-confirm")
	blocker := eval[string](p, "read the blockers", `[...document.querySelectorAll("#preview .blockers li")].map(li => li.dataset.code).join(",")`)
	if open && (blocker != "duplicate_order" || button != "Show the existing order") {
		p.t.Fatalf("preview of a second identical order: blockers %q, button %q; want duplicate_order and an offer to show it", blocker, button)
	} else if !open && (blocker != "" || button != "Confirm order") {
		p.t.Fatalf("preview of a first order: blockers %q, button %q; want none and Confirm order", blocker, button)
	}
	p.run("confirm the order", chromedp.Click(chromedp.CSS("#order-confirm")))
	p.waitJS("the order outcome", `document.querySelector("#order-result [data-kind]") !== null`)
	return eval[orderState](p, "read the order", readOrder)
}

func (p *pageDriver) orderAndDuplicate() string {
	p.t.Helper()
	first := p.placeOrder(false)
	if first.Kind != "ok" || first.ID == "" || first.Status != "PREVIEW_READY" || first.Workflow != "started" ||
		!strings.Contains(first.Words, "Placed") || strings.Contains(first.Words, "PREVIEW_READY") {
		p.t.Fatalf("first order = %+v, want a new PREVIEW_READY order shown as \"Placed\", workflow started", first)
	}
	if first.NextStep != "payment" || !strings.Contains(first.StepText, first.ID) {
		p.t.Fatalf("next step = %+v, want payment for the one-off plan, naming the order", first)
	}
	p.screenshot("browser-order.png")
	p.run("go back to the results", chromedp.Click(chromedp.CSS("#order-result button")), chromedp.WaitNotVisible(chromedp.CSS("#order-panel")))
	again := p.placeOrder(true)
	if again.Kind != "duplicate" || again.ID != first.ID {
		p.t.Fatalf("second identical order = %+v, want duplicate_order showing order %s", again, first.ID)
	}
	return first.ID
}

func (p *pageDriver) checkOrdersList(orderID string) {
	p.t.Helper()
	p.waitJS("the orders list", `document.querySelectorAll("#orders-list > li").length > 0`)
	ids := eval[[]string](p, "read the orders list", `[...document.querySelectorAll("#orders-list .order-details")].map(d => d.dataset.orderId)`)
	if len(ids) != 1 || ids[0] != orderID {
		p.t.Fatalf("orders list = %v, want exactly the order %s", ids, orderID)
	}
	card := p.readCard("#orders-list", orderID)
	if card.Status != "PREVIEW_READY" || card.Timeline != "PREVIEW_READY/client" || !card.Cancel || card.Download {
		p.t.Fatalf("listed order = %+v, want PREVIEW_READY with one history entry by the client, a cancel button and no download", card)
	}
}

// checkBlockersInWords picks the credit plan on an account without
// credits: the preview must explain the blocker and keep confirm disabled.
func (p *pageDriver) checkBlockersInWords() {
	p.t.Helper()
	p.run("open the order panel again",
		chromedp.Click(chromedp.CSS("#order-result button")), chromedp.WaitNotVisible(chromedp.CSS("#order-panel")),
		clickAgainIfReplaced("#results > li.card .order-button"), chromedp.WaitVisible(chromedp.CSS("#order-panel")))
	p.waitJS("the first preview", `document.querySelector("#preview .message") !== null`)
	eval[string](p, "choose the credit plan", `(() => { const s = document.querySelector("#order-plan");
		s.value = "subscription-basic"; s.dispatchEvent(new Event("change")); return s.value; })()`)
	p.waitJS("the blocked preview", `document.querySelector("#preview [data-code=insufficient_credits]") !== null`)
	words := p.text("read the blocker", "#preview [data-code=insufficient_credits]")
	disabled := eval[bool](p, "read the confirm button", `document.querySelector("#order-confirm").disabled`)
	if !strings.Contains(words, "not have enough credits: the plan costs 1 credit, the account holds 0 credits.") || !disabled {
		p.t.Fatalf("blocker = %q, confirm disabled = %v; want the credits explained from its params and no way to confirm", words, disabled)
	}
	// In German the blocker is said from its code and params, not in the
	// service's English.
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the blocker in German", `document.documentElement.lang === "de"`)
	words = p.text("read the blocker in German", "#preview [data-code=insufficient_credits]")
	p.run("switch back to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	if words != "Ihr Konto hat nicht genug Guthaben: Der Tarif kostet 1 Guthabenpunkt, das Konto hat 0 Guthabenpunkte." {
		p.t.Fatalf("German blocker = %q, want it said in German from code and params", words)
	}
}

func (p *pageDriver) screenshot(name string) {
	p.t.Helper()
	png := value(p, "take a screenshot", chromedp.FullScreenshot(100))
	dir := os.Getenv("COMPANYDOCS_SCREENSHOT_DIR")
	if dir == "" {
		dir = p.t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatalf("save screenshot: %v", err)
	}
	p.t.Logf("screenshot saved to %s (set COMPANYDOCS_SCREENSHOT_DIR to keep it)", path)
}

func (p *pageDriver) checkGerman() {
	p.t.Helper()
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	// the service answers the search again in German
	p.waitJS("the reasons in German", `(() => { const r = [...document.querySelectorAll("#results > li.card:first-child .reasons li")];
		return r.length > 0 && r.every(li => li.lang === "de"); })()`)
	heading := p.text("read the search heading", "#search-heading")
	badge := p.text("read the top badge", "#results > li.card .badge")
	lang := eval[string](p, "read the page language", `document.documentElement.lang`)
	if heading != "Suche" || badge != "Exakter Treffer" || lang != "de" {
		p.t.Fatalf("German page: heading %q, badge %q, lang %q", heading, badge, lang)
	}
	if credits := p.text("read the balance", "#account-credits"); credits != "Guthaben: 0" {
		p.t.Errorf("German balance %q, want %q", credits, "Guthaben: 0")
	}
	p.checkGermanReasons()
	p.checkGermanPlans()
	p.checkGermanNote()
	p.checkGermanDiscovery()
	p.run("switch back to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	// the service labels the plans again, in English
	p.waitJS("the plans in English", `(document.querySelector("#order-plan option") || {}).textContent === "AD, one-off: 4.50 EUR"`)
}

// checkGermanNote searches a number the register court does not have: the
// note of the understanding line is said in German from its code, and the
// search for Rheinbahn is restored for the steps after.
func (p *pageDriver) checkGermanNote() {
	p.t.Helper()
	p.typeClue("HRB 562 Kiel")
	p.waitJS("the note for HRB 562 Kiel", `document.querySelector("#understanding .note[data-code=no_entry_at_court]") !== null`)
	note := p.text("read the note", "#understanding .note")
	lang := eval[string](p, "read the note's language", `document.querySelector("#understanding .note").lang`)
	if want := "Kein Eintrag HRB 562 beim Registergericht Kiel; Einträge anderer Gerichte werden gezeigt."; note != want || lang != "de" {
		p.t.Errorf("German note = %q (lang %q), want %q", note, lang, want)
	}
	p.typeClue("Rheinbahn AG Düsseldorf")
	p.waitJS("results for Rheinbahn again", `document.querySelector("#understanding").textContent.includes("AG") &&
		document.querySelector("#understanding .note") === null && document.querySelectorAll("#results > li.card").length > 0`)
}

// checkGermanPlans reads the plans of the order panel and the plan of the
// order in "My orders" on the German page: the service labels each in
// German from its documents, kind and price, short enough for a phone.
func (p *pageDriver) checkGermanPlans() {
	p.t.Helper()
	want := []string{"AD, Einzelkauf: 4,50 EUR", "CD, Einzelkauf: 4,50 EUR", "AD + CD, Abo: 1 Guthabenpunkt"}
	p.waitJS("the plans in German", `(document.querySelector("#order-plan option") || {}).textContent === "AD, Einzelkauf: 4,50 EUR"`)
	options := eval[[]string](p, "read the plan options", `[...document.querySelectorAll("#order-plan option")].map(o => o.textContent)`)
	if !slices.Equal(options, want) {
		p.t.Errorf("German plan options %q, want %q", options, want)
	}
	orders := p.text("read my orders", "#orders-list")
	if !strings.Contains(orders, "AD, Einzelkauf") || strings.Contains(orders, "one-off") {
		p.t.Errorf("German orders list names the plan in English or not at all: %q", orders)
	}
}

// checkGermanDiscovery searches the LEI of a real GLEIF record of the
// embedded LEI sample that stays unverified (Franz-Dürk-Stiftung: its
// registration authority is no register court, it names no register
// number, and GLEIF corroborated it only partly). On the German page the
// card says what is missing in German, without the service's English
// sentence; then the search for Rheinbahn is restored.
func (p *pageDriver) checkGermanDiscovery() {
	p.t.Helper()
	p.typeClue("159559AIRJTK5Q44LO95")
	p.waitJS("the discovery card", `document.querySelector("#results > li.card .reasons li[data-code=discovery_unverified]") !== null`)
	reason := p.text("read the discovery reason", "#results > li.card .reasons li[data-code=discovery_unverified]")
	lang := eval[string](p, "read the discovery reason's language", `document.querySelector("#results > li.card .reasons li[data-code=discovery_unverified]").lang`)
	want := "Eintrag aus dem LEI-Register nicht bestätigt: Die Registrierungsstelle RA000737 bei GLEIF ist kein deutsches Registergericht; " +
		"GLEIF nennt keine Registernummer; Prüfung durch GLEIF: teilweise bestätigt, nicht vollständig bestätigt"
	if reason != want || lang != "de" {
		p.t.Errorf("German discovery reason = %q (lang %q), want %q", reason, lang, want)
	}
	card := p.text("read the discovery card", "#results > li.card")
	for _, english := range []string{"registration authority", "is not a known", "no register reference", "validation sources", "CORROBORATED", "not verified"} {
		if strings.Contains(card, english) {
			p.t.Errorf("German discovery card has the English %q: %q", english, card)
		}
	}
	p.typeClue("Rheinbahn AG Düsseldorf")
	p.waitJS("results for Rheinbahn again", `document.querySelector("#understanding").textContent.includes("AG") &&
		document.querySelector("#understanding .note") === null && document.querySelectorAll("#results > li.card").length > 0 &&
		document.querySelector("#results > li.card h3").textContent === "Rheinbahn AG"`)
}

// checkGermanReasons reads the reasons of the top card (Rheinbahn AG,
// found by name, legal form and seat) on the German page: each is said in
// German from its code and params, and marked as German.
func (p *pageDriver) checkGermanReasons() {
	p.t.Helper()
	top := p.cards()[0]
	langs := eval[[]string](p, "read the reasons' languages", `[...document.querySelectorAll("#results > li.card:first-child .reasons li")].map(li => li.lang)`)
	joined := strings.Join(top.Reasons, "; ")
	for _, want := range []string{"Name stimmt nach Normalisierung überein", "Sitz Düsseldorf stimmt überein", "Rechtsform AG stimmt überein"} {
		if !slices.Contains(top.Reasons, want) {
			p.t.Errorf("German reasons of %s = %q, want %q among them", top.Name, joined, want)
		}
	}
	for i, l := range langs {
		if l != "de" || strings.Contains(top.Reasons[i], "matches") {
			p.t.Errorf("German reason %q is marked %q, want it said in German", top.Reasons[i], l)
		}
	}
}

// checkPhoneWidth shows the page on a phone-sized screen, in English and
// in German (whose words are longer): nothing may be wider than the
// screen (no sideways scrolling).
func (p *pageDriver) checkPhoneWidth(screenshot string) {
	p.t.Helper()
	p.run("emulate a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	p.fitsPhone(screenshot)
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)
	p.fitsPhone(strings.TrimSuffix(screenshot, ".png") + "-de.png")
	p.run("switch back to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in English", `document.documentElement.lang === "en"`)
	p.run("leave the phone view", chromedp.ResetViewport())
}

// sticksOut lists what does not fit a 375 px screen: an element wider
// than the screen, one that reaches out of its parent's box, or one whose
// content overflows it (a long word that does not wrap). What lies in a
// box that scrolls sideways (a wide table) scrolls there, not the page.
// A form control is judged by what a person sees, not by its scroll
// width (which for a select is its longest option, whatever is shown): a
// select by the option it shows, which must fit its box; a text field or
// a file input scrolls its own text. Only the innermost such elements are
// named: they are the ones to fix.
const sticksOut = `(() => {
	const box = e => e.getBoundingClientRect();
	const scrolls = e => { for (let a = e.parentElement; a; a = a.parentElement) { if (["auto", "scroll"].includes(getComputedStyle(a).overflowX)) return true; } return false; };
	const shown = e => { const r = box(e); return r.width > 0 && r.height > 0 && !["absolute", "fixed"].includes(getComputedStyle(e).position) && !scrolls(e); };
	const inside = e => { const p = e.parentElement, r = box(e), q = box(p);
		return r.right <= Math.min(375, q.left + p.clientLeft + p.clientWidth) + 1 && r.left >= q.left + p.clientLeft - 1; };
	const shownOption = e => { const o = e.selectedOptions[0]; if (!o) return 0;
		const c = e.cloneNode(false); c.removeAttribute("id"); c.append(o.cloneNode(true));
		c.style.position = "absolute"; c.style.visibility = "hidden"; c.style.width = "auto"; c.style.minWidth = "0"; c.style.maxWidth = "none";
		document.body.append(c); const w = box(c).width; c.remove(); return w; };
	const needs = e => e.tagName === "SELECT" ? shownOption(e) : ["INPUT", "TEXTAREA"].includes(e.tagName) ? 0 : e.scrollWidth;
	const room = e => e.tagName === "SELECT" ? box(e).width : e.clientWidth;
	const overflows = e => e.clientWidth > 0 && needs(e) > room(e) + 1 && (e.tagName === "SELECT" || getComputedStyle(e).overflowX === "visible");
	const bad = e => shown(e) && (!inside(e) || overflows(e));
	return [...document.querySelectorAll("body *")].filter(e => bad(e) && ![...e.querySelectorAll("*")].some(bad)).slice(0, 8)
		.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + String(e.className).replace(/ /g, ".") : "") +
			" (" + Math.round(box(e).left) + " to " + Math.round(box(e).right) + " px, content " + Math.round(needs(e)) + " px) " +
			JSON.stringify((e.textContent || "").trim().slice(0, 40)));
})()`

// fitsPhone fails the test when anything on the page does not fit a
// 375 px screen, and otherwise keeps a screenshot.
func (p *pageDriver) fitsPhone(screenshot string) {
	p.t.Helper()
	// The page lays itself out again after the viewport changes; what is
	// measured in between can be a frame of the old layout. A page that
	// keeps something sticking out fails, naming it.
	ctx, cancel := context.WithTimeout(p.ctx, 3*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.documentElement.scrollWidth <= 375 && `+sticksOut+`.length === 0`,
		chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		width := eval[int](p, "measure the page width", `document.documentElement.scrollWidth`)
		wide := eval[[]string](p, "name what sticks out", sticksOut)
		p.t.Fatalf("on a 375 px screen (page language %s) the page is %d px wide and these do not fit:\n%s",
			eval[string](p, "read the page language", `document.documentElement.lang`), width, strings.Join(wide, "\n"))
	}
	p.screenshot(screenshot)
}

func (p *pageDriver) signOut() {
	p.t.Helper()
	p.run("sign out", chromedp.Click(chromedp.CSS("#signout-button")), chromedp.WaitVisible(chromedp.CSS("#api-key")))
	type signedOut struct {
		Stored  bool   `json:"stored"`
		Action  string `json:"action"`
		Panel   bool   `json:"panel"`
		Focused string `json:"focused"`
	}
	after := eval[signedOut](p, "inspect the signed-out page", `({stored: sessionStorage.getItem("companydocs.session") !== null,
		action: document.querySelector("#results > li.card button").textContent,
		panel: !document.querySelector("#order-panel").hidden, focused: document.activeElement.id})`)
	if after.Stored || after.Action != "Sign in to order" || after.Panel || after.Focused != "api-key" {
		p.t.Fatalf("after sign-out: %+v; want no stored session, no order panel, sign-in offered and focused", after)
	}
}

// checkPageHeaders asserts the page and its files carry the security headers.
func checkPageHeaders(t *testing.T, base string) {
	t.Helper()
	for _, path := range []string{"", "static/js/main.js", "static/js/core.js", "static/i18n.js", "static/app.css"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET /%s: %v", path, err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if resp.StatusCode != http.StatusOK || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" ||
			resp.Header.Get("Referrer-Policy") != "no-referrer" ||
			strings.HasSuffix(path, ".js") && resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
			t.Fatalf("GET /%s: status %d, headers %v", path, resp.StatusCode, resp.Header)
		}
	}
}

// startBrowserServer ingests part of the embedded sample plus the fixture
// file and the embedded LEI sample into a temp data directory and starts
// the real server on it, with flags added to its own.
func startBrowserServer(t *testing.T, fixtures string, flags ...string) *app.Main {
	t.Helper()
	dir := t.TempDir()
	sample := filepath.Join(t.TempDir(), "sample.jsonl.bz2")
	if err := os.WriteFile(sample, data.Sample, 0o644); err != nil {
		t.Fatal(err)
	}
	leiSample := filepath.Join(t.TempDir(), "lei_sample.csv")
	if err := os.WriteFile(leiSample, data.LEISample, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	inputs := []ingest.Input{{Path: sample}, {Path: fixtures}, {Path: leiSample}}
	start := time.Now()
	defer func() { t.Logf("ingest and start took %s", time.Since(start).Round(time.Millisecond)) }()
	if _, _, err := app.BuildGeneration(context.Background(), dir, inputs, app.BuildOptions{Keep: index.DefaultKeep, MaxRecords: browserSampleRecords}, nil, logger); err != nil {
		t.Fatalf("ingest: %v", err)
	}
	m := app.NewMain()
	m.Stdout, m.Stderr = io.Discard, logs
	if err := m.ParseFlags(append([]string{"--data-dir", dir, "--addr", "127.0.0.1:0", "--log-format", "text", "--log-level", "warn"}, flags...)); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, logs)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs)
		}
	})
	return m
}

// clientAndOperator creates a client and an operator account on the
// browser test's server and returns their API keys.
func clientAndOperator(t *testing.T, m *app.Main, client, operator string) (clientKey, operatorKey string) {
	t.Helper()
	clientKey, err := m.Accounts.CreateAccount(client, 0)
	if err != nil {
		t.Fatal(err)
	}
	operatorKey, err = m.Accounts.CreateAccountWithRole(operator, companydocs.RoleOperator, 0)
	if err != nil {
		t.Fatal(err)
	}
	return clientKey, operatorKey
}

// openOnPhone opens the page of the server on a 375 px phone and waits
// until its script has started.
func (p *pageDriver) openOnPhone(m *app.Main) {
	p.t.Helper()
	p.run("open the page on a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile),
		chromedp.Navigate("http://"+m.Addr()+"/"), chromedp.WaitVisible(chromedp.CSS("#query")))
	p.waitJS("the page script started", `document.body.dataset.ready === "true"`)
}

// newBrowser starts headless Chromium with its own profile directory and
// no traffic of its own (updates, sync, background networking).
func newBrowser(t *testing.T, chrome string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1024, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("lang", "en-US"),
	}
	if fonts := pinnedFonts(t); fonts != "" {
		opts = append(opts, chromedp.Env("FONTCONFIG_FILE="+fonts))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// The first Do starts the browser; its context must carry no deadline,
	// or the deadline would stop the browser (each step has its own).
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	return ctx
}

// dejavuDirs are where systems keep DejaVu Sans, the font fontconfig
// itself depends on (fonts-dejavu-core on Debian and Ubuntu).
var dejavuDirs = []string{"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/share/fonts/TTF",
	"/usr/share/fonts/dejavu-sans-fonts", "/usr/local/share/fonts"}

// pinnedFonts writes a fontconfig configuration that shows Chromium DejaVu
// Sans (and DejaVu Sans Mono) only, for every family the page names, and
// returns its path: the layout the tests measure then does not depend on
// the fonts a machine has (Chromium's recommended fonts-liberation, for
// one, measures other widths). DejaVu Sans is wide, so what fits with it
// fits with the usual narrower fonts. COMPANYDOCS_BROWSER_FONTS=system
// runs with the machine's fonts instead (CI runs both); without DejaVu
// the test runs with the machine's fonts and says so.
func pinnedFonts(t *testing.T) string {
	t.Helper()
	if os.Getenv("COMPANYDOCS_BROWSER_FONTS") == "system" {
		t.Log("browser fonts: the machine's (COMPANYDOCS_BROWSER_FONTS=system)")
		return ""
	}
	dir := ""
	for _, d := range dejavuDirs {
		if _, err := os.Stat(filepath.Join(d, "DejaVuSans.ttf")); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		t.Logf("browser fonts: the machine's (no DejaVuSans.ttf in %v; install fonts-dejavu-core to pin them)", dejavuDirs)
		return ""
	}
	conf := filepath.Join(t.TempDir(), "fonts.conf")
	var aliases strings.Builder
	for _, family := range []string{"sans-serif", "serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "Helvetica Neue", "Helvetica", "Arial"} {
		fmt.Fprintf(&aliases, "  <match target=\"pattern\"><test name=\"family\"><string>%s</string></test>"+
			"<edit name=\"family\" mode=\"assign\" binding=\"strong\"><string>DejaVu Sans</string></edit></match>\n", family)
	}
	body := fmt.Sprintf(`<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>%s</dir>
  <cachedir>%s</cachedir>
%s  <alias binding="strong"><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
</fontconfig>
`, dir, filepath.Join(filepath.Dir(conf), "cache"), aliases.String())
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("browser fonts: DejaVu Sans from %s only (%s)", dir, conf)
	return conf
}

// browserExecutable finds Chromium. Without it the test skips, except in
// CI (CI=true), where a missing browser is a failure.
func browserExecutable(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	msg := "no Chromium found (looked for chromium, chromium-browser, google-chrome): install it with apt-get install chromium to run the browser test"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
