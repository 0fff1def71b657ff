package browser

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"companydocs/internal/realdata"

	"github.com/chromedp/chromedp"
)

// TestBrowserProfileView opens the page as the reconciliation manifest's
// view of a profile (/#profile=<id>) on a 375 px phone, in English and in
// German: the page shows the company's card, exact and orderable, and an
// id that names no profile gets a sentence saying what to do.
func TestBrowserProfileView(t *testing.T) {
	chrome := browserExecutable(t)
	m := startBrowserServer(t, realdata.Path(t, "offeneregister", "fixtures_665.jsonl"))
	base := "http://" + m.Addr()
	resp, err := http.Get(base + "/api/v1/reconcile/suggest/entity?prefix=" + url.QueryEscape("Rheinbahn AG"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var sugg struct{ Result []struct{ ID, Name string } }
	if err := json.Unmarshal(raw, &sugg); err != nil || len(sugg.Result) == 0 || sugg.Result[0].Name != "Rheinbahn AG" {
		t.Fatalf("suggest Rheinbahn AG: %s", raw)
	}
	var manifest struct{ View struct{ URL string } }
	resp, err = http.Get(base + "/api/v1/reconcile")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&manifest)
	resp.Body.Close()
	view := strings.ReplaceAll(manifest.View.URL, "{{id}}", url.QueryEscape(sugg.Result[0].ID))

	p := &pageDriver{t: t, ctx: newBrowser(t, chrome)}
	p.run("emulate a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	p.run("open the profile's view", chromedp.Navigate(view), chromedp.WaitVisible(chromedp.CSS("#query")))
	p.waitJS("the page script started", `document.body.dataset.ready === "true"`)
	p.useEnglish()
	p.waitJS("the profile's card", `document.querySelectorAll("#results > li.card").length > 0`)
	cards := p.cards()
	if cards[0].Name != "Rheinbahn AG" || cards[0].Label != "exact" || cards[0].Orderable != "true" || cards[0].Action != "Sign in to order" {
		t.Fatalf("the profile's view shows %+v, want Rheinbahn AG exact with its order action", cards[0])
	}
	if q := eval[string](p, "read the search box", `document.querySelector("#query").value`); q != "HRB 562 Düsseldorf" {
		t.Errorf("the search box holds %q, want the profile's register number and court", q)
	}
	p.fitsPhone("profile-view-phone.png")
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)
	if badge := p.text("read the badge", "#results > li.card .badge"); badge != "Exakter Treffer" {
		t.Errorf("German badge %q", badge)
	}
	p.fitsPhone("profile-view-phone-de.png")
	p.run("open an unknown profile", chromedp.Navigate(base+"/#profile=nosuchprofile"))
	p.waitJS("the unknown profile's sentence", `document.querySelector("#search-status").textContent.includes("Firmenprofil")`)
	if cards := eval[int](p, "count cards", `document.querySelectorAll("#results > li.card").length`); cards != 0 {
		t.Errorf("%d cards for an unknown profile", cards)
	}
	p.run("switch to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in English", `document.documentElement.lang === "en"`)
	p.fitsPhone("profile-view-unknown-phone.png")
}
