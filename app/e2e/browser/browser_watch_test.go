package browser

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"companydocs/internal/e2e"

	"github.com/chromedp/chromedp"
)

// TestBrowserWatch drives the page in headless Chromium: a client signs
// in, finds a real company by its register number, watches it; a new
// generation puts it into liquidation; after the swap the list of watched
// companies says so in German and in English, on a 375 px screen, and "Order a fresh
// printout" opens the order panel for it.
func TestBrowserWatch(t *testing.T) {
	chrome := browserExecutable(t)
	recs := e2e.WatchSample(t)
	cases := e2e.PickWatchCases(t, recs)
	liquidated := cases[3]
	if liquidated.Name != "in liquidation" {
		t.Fatalf("case 3 is %q", liquidated.Name)
	}
	dir := t.TempDir()
	e2e.WriteGeneration(t, dir, recs, cases, nil)
	s := e2e.WatchServer(t, dir)
	key, err := s.Accounts.CreateAccount("browser-watcher", 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &pageDriver{t: t, ctx: newBrowser(t, chrome)}
	p.run("open the page", chromedp.Navigate(s.Base+"/"), chromedp.WaitVisible(chromedp.CSS("#query")))
	p.waitJS("the page script started", `document.body.dataset.ready === "true"`)
	p.useEnglish()
	p.run("sign in", chromedp.SendKeys(chromedp.CSS("#api-key"), key), chromedp.Click(chromedp.CSS("#signin-button")),
		chromedp.WaitVisible(chromedp.CSS("#signout-button")))
	p.waitJS("the empty list of watches", `document.querySelector("#watches-status").textContent.startsWith("You watch no company yet")`)

	attrs := liquidated.Record["all_attributes"].(map[string]any)
	p.typeClue(fmt.Sprint(attrs["_registerArt"], " ", attrs["_registerNummer"], " ", attrs["registrar"]))
	name := fmt.Sprint(liquidated.Record["name"])
	p.waitJS("the company found", fmt.Sprintf(`[...document.querySelectorAll("#results > li.card h3")].some(h => h.textContent === %q)`, name))
	card := fmt.Sprintf(`[...document.querySelectorAll("#results > li.card")].find(li => li.querySelector("h3").textContent === %q)`, name)
	if got := eval[string](p, "read the watch button", card+`.querySelector(".watch-button").textContent`); got != "Watch" {
		t.Fatalf("watch button says %q", got)
	}
	eval[bool](p, "watch the company", `(() => { `+card+`.querySelector(".watch-button").click(); return true; })()`)
	p.waitJS("the card says watched", card+`.querySelector(".watching") !== null`)
	p.waitJS("the list holds it", `document.querySelectorAll("#watches-list > li").length === 1`)
	if got := p.text("read the watch", "#watches-list > li .watch-change"); !strings.HasPrefix(got, "No change since you started watching") {
		t.Fatalf("a new watch says %q", got)
	}

	e2e.WriteGeneration(t, dir, recs, cases, e2e.EditsOf(cases))
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)
	p.waitJS("the change arrived", `(() => { document.querySelector("#watches-refresh").click();
		return document.querySelector("#watches-list > li [data-field=status]") !== null; })()`)
	// a refresh still in flight may re-draw the list (empty while it is
	// drawn) after any one reading: read until every word is there, at
	// most 10 s, then judge the last reading
	wants := []string{"Geändert (", "Umbenannt: " + name + " → " + name + " i.L.", "Status: eingetragen → in Liquidation"}
	words := ""
	for i := 0; i < 200; i++ {
		if words = p.text("read the change", "#watches-list > li .watch-change"); containsAll(words, wants) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range wants {
		if !strings.Contains(words, want) {
			t.Errorf("the change in German reads %q, want %q in it", words, want)
		}
	}
	p.run("emulate a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	p.run("show the watches", chromedp.ScrollIntoView(chromedp.CSS("#watches")))
	p.fitsPhone("browser-watch-de.png")
	p.run("switch to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in English", `document.documentElement.lang === "en"`)
	if words := p.text("read the change in English", "#watches-list > li .watch-change"); !strings.Contains(words, "Status: registered → in liquidation") {
		t.Errorf("the change in English reads %q", words)
	}
	p.fitsPhone("browser-watch.png")
	p.run("order a fresh printout", chromedp.Click(chromedp.CSS("#watches-list > li .order-fresh")), chromedp.WaitVisible(chromedp.CSS("#order-panel")))
	if got := p.text("read the order panel", "#order-company"); !strings.HasPrefix(got, name+" i.L.") {
		t.Errorf("the order panel is for %q, want %q", got, name+" i.L.")
	}
	p.waitJS("the preview of the fresh printout", `document.querySelector("#order-confirm").disabled === false`)
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
