package browser

import (
	"context"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// pastedImprint is the imprint of Rheinbahn AG as a web site would print
// it: name and address as the fixture record has them (Lierenfelder Straße
// 42, 40231 Düsseldorf), a phone and an e-mail line, and the register line
// (Amtsgericht Düsseldorf HRB 562), which the test types after Shift+Enter.
var pastedImprint = []string{
	"Rheinbahn AG",
	"Lierenfelder Straße 42",
	"40231 Düsseldorf",
	"Telefon: 0211 582-0",
	"E-Mail: info@rheinbahn.de",
}

const pastedRegisterLine = "Amtsgericht Düsseldorf HRB 562"

// pasteText inserts text at the caret as a paste does: in one piece, line
// breaks included, with one input event (Input.insertText, not key presses,
// so that a line break is no Enter).
func pasteText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// pressEnter presses Enter, with Shift when shift is set, as a keyboard
// does: one keyDown that carries the character, then keyUp. (chromedp's
// KeyEvent sends the character as a separate char event, which types it
// even when the page has prevented the keydown.)
func pressEnter(shift bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		key := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter",
			WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Text: "\r", UnmodifiedText: "\r"}
		if shift {
			key.Modifiers = int64(chromedp.ModifierShift)
		}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, key); err != nil {
			return err
		}
		key.Type, key.Text, key.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, key)
		return err
	})
}

// leavePhone ends the phone emulation and gives the page the browser
// window's size again (chromedp.ResetViewport leaves it 375 px wide), so
// that the steps after run, and take their screenshots, at desktop width.
func leavePhone() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: false})
		return err
	})
}

// pastedLines is what the page says about the lines of a pasted block.
type pastedLines struct {
	UsedHeading  string     `json:"used_heading"`
	AsideHeading string     `json:"aside_heading"`
	Used         []lineView `json:"used"`
	Aside        []lineView `json:"aside"`
}

type lineView struct {
	Code string `json:"code"`
	Lang string `json:"lang"`
	Text string `json:"text"`
}

const readPastedLines = `(() => {
	const items = id => [...document.querySelectorAll("#" + id + " > li")].map(li => ({code: li.dataset.code, lang: li.lang, text: li.textContent}));
	return {used_heading: document.querySelector("#lines-used-heading").textContent, aside_heading: document.querySelector("#lines-aside-heading").textContent,
		used: items("lines-used"), aside: items("lines-aside")};
})()`

// lineWith finds the line of a code that quotes the pasted text.
func lineWith(lines []lineView, code, pasted string) (lineView, bool) {
	for _, l := range lines {
		if l.Code == code && strings.Contains(l.Text, pasted) {
			return l, true
		}
	}
	return lineView{}, false
}

// queryShowsAllLines holds when the search box shows all its text without
// scrolling and is as wide as its row (a grown box fits its lines).
const queryShowsAllLines = `(() => { const q = document.querySelector("#query");
	return q.scrollHeight <= q.clientHeight + 1 && q.offsetWidth >= q.parentElement.clientWidth * 0.6; })()`

// pasteImprint pastes an imprint block into the search box, adds the
// register line with Shift+Enter (a new line, no search) and searches with
// Enter: Rheinbahn AG is the exact first candidate, and the lists under
// the results name the register line as used and the phone and e-mail
// lines as set aside, in English and then in German, on a phone screen
// too. The search for Rheinbahn is restored for the steps after.
func (p *pageDriver) pasteImprint() {
	p.t.Helper()
	p.typeClue("")
	oneLine := eval[float64](p, "measure the empty search box", `document.querySelector("#query").offsetHeight`)
	p.run("paste an imprint", chromedp.Focus(chromedp.CSS("#query")), pasteText(strings.Join(pastedImprint, "\n")))
	p.run("add a line with Shift+Enter", pressEnter(true))
	type box struct {
		Value  string  `json:"value"`
		Height float64 `json:"height"`
		Scroll bool    `json:"scroll"`
	}
	const readBox = `(() => { const q = document.querySelector("#query");
		return {value: q.value, height: q.offsetHeight, scroll: q.scrollHeight > q.clientHeight + 1}; })()`
	pasted := eval[box](p, "read the search box after Shift+Enter", readBox)
	if want := strings.Join(pastedImprint, "\n") + "\n"; pasted.Value != want {
		p.t.Fatalf("search box after pasting and Shift+Enter = %q, want the pasted lines and a new empty line %q", pasted.Value, want)
	}
	if pasted.Height < 3*oneLine || pasted.Scroll {
		p.t.Errorf("search box with %d lines is %.0f px high (one line: %.0f px, scrolls: %v); want it grown to its lines",
			len(pastedImprint)+1, pasted.Height, oneLine, pasted.Scroll)
	}
	p.run("type the register line and press Enter",
		chromedp.SendKeys(chromedp.CSS("#query"), pastedRegisterLine),
		pressEnter(false))
	p.waitJS("results for the imprint", `!document.querySelector("#pasted-lines").hidden &&
		document.querySelector("#search-status").textContent.includes("Rheinbahn AG / Lierenfelder") &&
		document.querySelectorAll("#results > li.card").length > 0`)
	searched := eval[box](p, "read the search box after Enter", readBox)
	if want := strings.Join(append(pastedImprint[:len(pastedImprint):len(pastedImprint)], pastedRegisterLine), "\n"); searched.Value != want {
		p.t.Errorf("search box after Enter = %q, want %q (Enter searches and adds no line)", searched.Value, want)
	}
	if top := p.cards()[0]; top.Name != "Rheinbahn AG" || top.Label != "exact" {
		p.t.Fatalf("top card for the pasted imprint = %+v, want Rheinbahn AG, exact", top)
	}
	p.checkPastedLines("en", "Used", "Set aside")
	p.screenshot("browser-paste.png")

	// On a phone, in English and in German: the box still shows every
	// line, and nothing is wider than the screen.
	p.run("emulate a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	p.waitJS("the search box shows its lines on a phone", queryShowsAllLines)
	p.fitsPhone("browser-paste-phone.png")
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)
	// the service answers the search again in German
	p.waitJS("the lines said in German", `[...document.querySelectorAll("#pasted-lines li")].every(li => li.lang === "de")`)
	p.checkPastedLines("de", "Verwendet", "Nicht verwendet")
	p.fitsPhone("browser-paste-phone-de.png")
	p.run("switch back to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in English", `document.documentElement.lang === "en"`)
	p.run("leave the phone view", leavePhone())
	p.waitJS("the search box shows its lines again", queryShowsAllLines)

	p.typeClue("Rheinbahn AG Düsseldorf")
	p.waitJS("results for Rheinbahn again", `document.querySelector("#pasted-lines").hidden &&
		document.querySelector("#search-status").textContent.includes("Rheinbahn AG Düsseldorf") &&
		document.querySelectorAll("#results > li.card").length > 0`)
	if h := eval[float64](p, "measure the search box", `document.querySelector("#query").offsetHeight`); h != oneLine {
		p.t.Errorf("search box with one typed line is %.0f px high, want one line (%.0f px) again", h, oneLine)
	}
}

// checkPastedLines reads the two lists under the results in a language:
// headings, the register line used, the phone and e-mail lines set aside,
// each said in that language from its code (no English sentence on the
// German page) and quoting the line as pasted.
func (p *pageDriver) checkPastedLines(lang, usedHeading, asideHeading string) {
	p.t.Helper()
	got := eval[pastedLines](p, "read the pasted lines", readPastedLines)
	if got.UsedHeading != usedHeading || got.AsideHeading != asideHeading {
		p.t.Errorf("%s: list headings %q and %q, want %q and %q", lang, got.UsedHeading, got.AsideHeading, usedHeading, asideHeading)
	}
	for _, want := range []struct {
		lines  []lineView
		code   string
		pasted string
	}{
		{got.Used, "line_register", pastedRegisterLine},
		{got.Aside, "aside_phone", "Telefon: 0211 582-0"},
		{got.Aside, "aside_email", "E-Mail: info@rheinbahn.de"},
	} {
		if _, ok := lineWith(want.lines, want.code, want.pasted); !ok {
			p.t.Errorf("%s: no %s line quoting %q among %+v", lang, want.code, want.pasted, want.lines)
		}
	}
	for _, l := range append(got.Used, got.Aside...) {
		english := strings.HasPrefix(l.Text, "Used as") || strings.HasPrefix(l.Text, "Set aside")
		if l.Lang != lang || (lang == "de" && english) {
			p.t.Errorf("%s page: line %q (%s) is marked %q", lang, l.Text, l.Code, l.Lang)
		}
	}
}
