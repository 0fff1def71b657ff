package browser

import (
	"testing"

	"companydocs/internal/realdata"

	"github.com/chromedp/chromedp"
)

// TestBrowserOrderPanelOffersAPlanTheAccountCanPay: the order panel
// offers first a credits plan the account can pay now for a document the
// company holds, so that an order waits for nobody; an account without
// the credits is offered a plan for such a document paid otherwise.
func TestBrowserOrderPanelOffersAPlanTheAccountCanPay(t *testing.T) {
	chrome := browserExecutable(t)
	m := startBrowserServer(t, realdata.Path(t, "offeneregister", "fixtures_665.jsonl"))
	rich, err := m.Accounts.CreateAccount("browser-credits", 3)
	if err != nil {
		t.Fatal(err)
	}
	poor, err := m.Accounts.CreateAccount("browser-no-credits", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, want string
	}{{rich, "subscription-basic"}, {poor, "ad-single"}} {
		p := &pageDriver{t: t, ctx: newBrowser(t, chrome)}
		p.run("open the page", chromedp.Navigate("http://"+m.Addr()+"/"), chromedp.WaitVisible(chromedp.CSS("#query")))
		p.waitJS("the page script started", `document.body.dataset.ready === "true"`)
		p.useEnglish()
		p.searchRheinbahn()
		p.signInWith(tc.key)
		p.waitJS("the balance read", `document.querySelector("#account-credits").textContent.startsWith("Credits: ")`)
		p.run("open the order panel", clickAgainIfReplaced("#results > li.card .order-button"), chromedp.WaitVisible(chromedp.CSS("#order-panel")))
		if got := eval[string](p, "read the offered plan", `document.querySelector("#order-plan").value`); got != tc.want {
			t.Errorf("the panel offers %q first, want %q", got, tc.want)
		}
	}
}
