package browser

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"companydocs/internal/e2e"
	"companydocs/internal/realdata"
	"companydocs/messages"
	"companydocs/sheet"

	"github.com/chromedp/chromedp"
)

// manyRowsView is a row of the page's "Many companies" table.
type manyRowsView struct {
	Row      int    `json:"row"`
	Label    string `json:"label"`
	Badge    string `json:"badge"`
	Name     string `json:"name"`
	WhyNone  string `json:"whyNone"`
	Review   bool   `json:"review"`
	Order    bool   `json:"order"`
	Reviewed bool   `json:"reviewed"`
	Action   string `json:"action"`
}

const readManyRows = `[...document.querySelectorAll("#many-rows > tr[data-row]")].map(tr => ({
	row: Number(tr.dataset.row),
	label: (tr.querySelector(".badge") || {dataset: {}}).dataset.label || "",
	badge: (tr.querySelector(".badge") || {textContent: ""}).textContent,
	name: (tr.querySelector(".cand-name") || {textContent: ""}).textContent,
	whyNone: (tr.querySelector(".why-none") || {textContent: ""}).textContent,
	review: tr.querySelector(".review-button") !== null,
	order: tr.querySelector(".order-button") !== null,
	reviewed: tr.querySelector("[data-reviewed]") !== null,
	action: tr.querySelector(".row-actions") ? tr.querySelector(".row-actions").textContent : "",
}))`

// TestBrowserManyCompanies uploads a semicolon CSV with a BOM of 50 real
// companies of the embedded sample (names, every third with a typo,
// seats, every fourth with its register entry) on the page's "Many
// companies" section: the columns are preselected from the header, the
// rows resolve through the batch endpoint with a progress bar, two rows
// to verify are reviewed (one gets its second candidate, one "none of
// these"), and the downloaded CSV is the file "companydocs resolve
// --server" writes for the same upload, the reviewed rows holding the
// choices. An exact orderable row opens the
// page's order panel. In German every text of the section is German; on
// a 375 px phone nothing sticks out (the table scrolls in its box). A
// table pasted from a spreadsheet (tab-separated) is read as well.
func TestBrowserManyCompanies(t *testing.T) {
	chrome := browserExecutable(t)
	m := startBrowserServer(t, realdata.Path(t, "offeneregister", "fixtures_665.jsonl"))
	base := "http://" + m.Addr()
	key, err := m.Accounts.CreateAccount("browser-many", 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := e2e.ReadRecords(t, e2e.SampleFile(t), browserSampleRecords)
	rows := manyUploadRows(recs)
	upload := filepath.Join(t.TempDir(), "firmen.csv")
	e2e.WriteSheet(t, upload, ';', true, rows)
	want, _, line, code := e2e.RunCLI(t, "resolve", "--server", base, "--query", "Firma", "--city", "Ort", "--register", "Registernummer", upload)
	if code != 0 {
		t.Fatalf("resolve through the server: exit %d, %s", code, line)
	}
	expected := asThePageWrites(e2e.ReadSheet(t, []byte(strings.TrimPrefix(want, sheet.BOM)), ';'))

	p := &pageDriver{t: t, ctx: newBrowser(t, chrome)}
	p.run("open the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#many-file")))
	p.waitJS("the page script started", `document.body.dataset.ready === "true"`)
	p.useEnglish()
	p.signInWith(key)
	p.run("upload the CSV", chromedp.SetUploadFiles(chromedp.CSS("#many-file"), []string{upload}))
	p.waitJS("the table read", `document.querySelector("#many-read").textContent === "50 rows with 3 columns read."`)
	picked := eval[map[string]string](p, "read the preselected columns", `Object.fromEntries([...document.querySelectorAll("#many-columns select")].map(s => [s.dataset.prop, s.selectedOptions[0].textContent]))`)
	for prop, col := range map[string]string{"query": "Firma", "city": "Ort", "register_number": "Registernummer", "court": "(not used)"} {
		if picked[prop] != col {
			t.Errorf("column for %s preselected %q, want %q (all: %v)", prop, picked[prop], col, picked)
		}
	}
	p.run("find the companies", chromedp.Click(chromedp.CSS("#many-start")))
	p.waitJS("every row answered", `document.querySelector("#many-status").textContent.startsWith("50 rows searched")`)
	if bar := eval[[]float64](p, "read the progress bar", `[document.querySelector("#many-bar").value, document.querySelector("#many-bar").max]`); bar[0] != 50 || bar[1] != 50 {
		t.Errorf("progress bar at %v, want 50 of 50", bar)
	}
	shown := eval[[]manyRowsView](p, "read the table", readManyRows)
	if len(shown) != 50 {
		t.Fatalf("%d rows in the table, want 50", len(shown))
	}
	var toReview []int
	orderAt, withoutCandidate := -1, 0
	for i, r := range shown {
		out := expected[i+1]
		if r.Name != out[4] || r.Label != out[8] {
			t.Errorf("row %d shows %q (%s), want %q (%s) as the command line found", i+1, r.Name, r.Label, out[4], out[8])
		}
		if r.Review != (out[8] != "exact" && out[3] != "") {
			t.Errorf("row %d (%s): review offered %v", i+1, out[8], r.Review)
		}
		if r.Order != (out[8] == "exact" && out[9] == "true") {
			t.Errorf("row %d (%s, orderable %s): order offered %v", i+1, out[8], out[9], r.Order)
		}
		if want := map[bool]string{true: "Review", false: ""}[r.Review] + map[bool]string{true: "Order a document", false: ""}[r.Order]; r.Action != want {
			t.Errorf("row %d: actions %q, want %q", i+1, r.Action, want)
		}
		if r.Review {
			toReview = append(toReview, i)
		}
		if out[3] == "" {
			// no candidate: the row says why, as the command line's
			// reasons cell does, and stays among the rows to review
			withoutCandidate++
			if r.WhyNone == "" || r.WhyNone != out[10] {
				t.Errorf("row %d without candidate says %q, want the notes %q", i+1, r.WhyNone, out[10])
			}
		}
		if orderAt < 0 && r.Order {
			orderAt = i
		}
	}
	if len(toReview) < 2 || orderAt < 0 {
		t.Fatalf("%d rows to review (want 2 or more) or no exact orderable row (%d) among the 50", len(toReview), orderAt)
	}

	// Review: one row gets another candidate than the best (the first
	// row that offers several), another "none of these"; the download
	// holds both choices.
	other := -1
	for _, i := range toReview {
		if p.openReview(i) >= 3 { // two candidates and "none"
			other = i
			break
		}
		p.closeReview(i)
	}
	if other < 0 {
		t.Fatal("no row to verify offers a second candidate")
	}
	p.pickReview(other, "1")
	none := toReview[0]
	if none == other {
		none = toReview[1]
	}
	p.openReview(none)
	p.pickReview(none, "-1")
	p.screenshot("browser-many.png")
	reviewed := eval[[]manyRowsView](p, "read the reviewed rows", readManyRows)
	for _, at := range []struct{ row, choice int }{{other, 1}, {none, -1}} {
		cells := reviewedCells(t, base, rows[at.row+1], at.choice)
		expected[at.row+1] = pageRow(append(rows[at.row+1][:3:3], cells[:len(pageResultColumns)-3]...), at.choice)
		if r := reviewed[at.row]; !r.Reviewed || r.Name != cells[1] || r.Order != (cells[6] == "true") {
			t.Errorf("row %d after review: %+v, want it marked reviewed, showing %q, order offered when orderable (%s)", at.row+1, r, cells[1], cells[6])
		}
	}
	reviewAt := other
	got := p.downloadMany()
	var wantFile bytes.Buffer
	wantFile.WriteString(sheet.BOM)
	w := csv.NewWriter(&wantFile)
	w.Comma = ';'
	for _, r := range expected {
		w.Write(r)
	}
	w.Flush()
	if got != wantFile.String() {
		t.Errorf("downloaded:\n%s\nwant:\n%s", got, wantFile.String())
	}

	// Order an exact orderable row through the page's order panel.
	p.run("order from the table", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#many-rows tr[data-row="%d"] .order-button`, orderAt))))
	p.waitJS("the order panel", `!document.querySelector("#order-panel").hidden`)
	if company := p.text("read the company to order", "#order-company"); !strings.HasPrefix(company, expected[orderAt+1][4]) {
		t.Errorf("order panel for %q, want %q", company, expected[orderAt+1][4])
	}
	p.run("back to the table", chromedp.Click(chromedp.CSS("#order-back")))

	p.checkManyGerman(reviewAt)
	if withoutCandidate == 0 {
		t.Error("no row of the upload is without a candidate: the filter's rows without one are not checked")
	}
	p.checkGermanCSV(len(toReview), withoutCandidate)
	p.run("emulate a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	p.fitsPhone("browser-many-phone-de.png")
	p.checkManyPhoneTable()
	p.run("switch to English", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in English", `document.documentElement.lang === "en"`)
	p.fitsPhone("browser-many-phone.png")
	p.run("leave the phone view", leavePhone())

	// A table pasted from a spreadsheet arrives tab-separated.
	var pasted strings.Builder
	pasted.WriteString("Name\tPLZ\tOrt")
	for _, r := range rows[1:4] {
		pasted.WriteString("\n" + r[0] + "\t\t" + r[1])
	}
	p.run("paste a table", chromedp.Focus(chromedp.CSS("#many-text")), pasteText(pasted.String()))
	p.waitJS("the pasted table read", `document.querySelector("#many-read").textContent === "3 rows with 3 columns read."`)
	picked = eval[map[string]string](p, "read the preselected columns", `Object.fromEntries([...document.querySelectorAll("#many-columns select")].map(s => [s.dataset.prop, s.selectedOptions[0].textContent]))`)
	if picked["query"] != "Name" || picked["postal_code"] != "PLZ" || picked["city"] != "Ort" {
		t.Errorf("columns preselected for the pasted table: %v, want Name, PLZ and Ort", picked)
	}
	if eval[bool](p, "check the old results are gone", `document.querySelector("#many-result").hidden`) == false {
		t.Error("the results of the uploaded file still show after a new table was pasted")
	}
}

// manyUploadRows are 50 rows of the records, as e2e.GermanExcelRows writes
// them, and last five of companies still registered (orderable when found
// exactly) whose clue holds the register entry after the name, as people
// write it in one cell ("Graf Plastics GmbH Freiburg HRB 261356").
func manyUploadRows(recs []e2e.Record) [][]string {
	rows := e2e.GermanExcelRows(recs, 45, 19)
	for _, r := range recs {
		if r.CurrentStatus == "currently registered" && r.Attributes.Docs["AD"] && len(rows) < 51 {
			rows = append(rows, []string{r.Name + " " + e2e.RegisterClue(r), r.Attributes.Office, ""})
		}
	}
	return rows
}

// openReview opens the review of a table row and returns how many
// choices it offers: the candidates and "none of these".
func (p *pageDriver) openReview(i int) int {
	p.t.Helper()
	p.run("open the review", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#many-rows tr[data-row="%d"] .review-button`, i))))
	p.waitJS("the candidates to choose from", `document.querySelector("#many-rows .review") !== null`)
	return eval[int](p, "count the choices", `document.querySelectorAll("#many-rows .review input[type=radio]").length`)
}

// closeReview closes the open review of a row with its button.
func (p *pageDriver) closeReview(i int) {
	p.t.Helper()
	p.run("close the review", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#many-rows tr[data-row="%d"] .review-button`, i))))
	p.waitJS("the review closed", `document.querySelector("#many-rows .review") === null`)
}

// pickReview picks a choice (a candidate's index, "-1" for none) in the
// open review of row i and saves it.
func (p *pageDriver) pickReview(i int, choice string) {
	p.t.Helper()
	sel := fmt.Sprintf(`#many-rows tr[data-row="%d"]`, i)
	p.run("pick a candidate", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#many-rows .review input[value="%s"]`, choice))),
		chromedp.Click(chromedp.CSS("#many-rows .review-save")))
	p.waitJS("the row reviewed", fmt.Sprintf(`document.querySelector(%q) !== null && document.querySelector("#many-rows .review") === null`, sel+" [data-reviewed]"))
}

// reviewedCells asks the batch endpoint for the row's candidates and
// returns the result cells of the one picked (empty for none).
func reviewedCells(t *testing.T, base string, row []string, choice int) []string {
	t.Helper()
	properties := map[string]string{}
	for prop, cell := range map[string]string{"city": row[1], "register_number": row[2]} {
		if cell = strings.TrimSpace(cell); cell != "" {
			properties[prop] = cell
		}
	}
	body, _ := json.Marshal(map[string]any{"queries": []any{map[string]any{"query": strings.TrimSpace(row[0]), "properties": properties}}})
	// The page and the command line have spent the search budget: wait
	// out the 429 as they do.
	answer, err := sheet.NewClient(base).Post(context.Background(), body)
	if err != nil || len(answer.Results) != 1 {
		t.Fatalf("batch answer %v: %v", answer, err)
	}
	// The upload is separated by semicolons: a decimal comma; the review
	// columns say the person's choice.
	cells := make([]string, len(sheet.ResultColumns)) // none of these: no candidate, no notes
	if choice >= 0 {
		cells = sheet.CandidateCells(&answer.Results[0].Candidates[choice], messages.English, ',')
	}
	copy(cells[len(cells)-len(sheet.NotReviewed):], []string{"true", strconv.FormatBool(choice >= 0), strconv.FormatBool(choice < 0)})
	return cells
}

// downloadMany presses the download button and returns the file saved.
func (p *pageDriver) downloadMany() string {
	p.t.Helper()
	return string(p.download("#many-download"))
}

// checkManyGerman switches to German: the section's headings, labels,
// buttons, status and badges are German, with no English text of the
// section left, the review open as well.
func (p *pageDriver) checkManyGerman(reviewAt int) {
	p.t.Helper()
	p.run("switch to German", chromedp.Click(chromedp.CSS("#lang-switch")))
	p.waitJS("the page in German", `document.documentElement.lang === "de"`)
	p.run("open a review", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#many-rows tr[data-row="%d"] .review-button`, reviewAt))))
	p.waitJS("the review in German", `document.querySelector("#many-rows .review legend").textContent.startsWith("Welches Unternehmen")`)
	type german struct {
		Heading string   `json:"heading"`
		Status  string   `json:"status"`
		English []string `json:"english"`
		Badges  []string `json:"badges"`
	}
	p.readTexts()
	got := eval[german](p, "read the section in German", `(() => {
		const en = window.pageTexts.en, de = window.pageTexts.de;
		const text = document.querySelector("#many").innerText;
		const english = Object.keys(en).filter(k => (k.startsWith("many.") || k.startsWith("label.")) && en[k] !== de[k])
			.map(k => en[k].split("{")[0].trim()).filter(s => s.length > 3 && text.includes(s));
		const labels = new Set(Object.keys(de).filter(k => k.startsWith("label.")).map(k => de[k]));
		return {heading: document.querySelector("#many-heading").textContent, status: document.querySelector("#many-status").textContent,
			english, badges: [...document.querySelectorAll("#many .badge")].map(b => b.textContent).filter(b => !labels.has(b))};
	})()`)
	if got.Heading != "Viele Unternehmen" || !strings.HasPrefix(got.Status, "50 Zeilen gesucht") {
		p.t.Errorf("German heading %q and status %q", got.Heading, got.Status)
	}
	if len(got.English) > 0 || len(got.Badges) > 0 {
		p.t.Errorf("English on the German page: %q; badges not in German: %q", got.English, got.Badges)
	}
}

// pageResultColumns are the columns the page's download appends to each
// row: those of "companydocs resolve", then the reviewer's.
var pageResultColumns = append(append([]string(nil), sheet.ResultColumns[:8]...), "reviewed", "chosen_by_hand", "none_of_these")

// asThePageWrites turns the rows "companydocs resolve" wrote for a file
// separated by semicolons (3 input columns) into the rows of the page's
// download of it before any review: the confidence with a decimal comma,
// and the reviewer's columns, false.
func asThePageWrites(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		cells := r[: 3+8 : 3+8]
		if i == 0 {
			out[i] = append(cells, pageResultColumns[8:]...)
			continue
		}
		out[i] = pageRow(cells, 0)
		out[i][11], out[i][12], out[i][13] = "false", "false", "false"
	}
	return out
}

// pageRow is a row of the page's download: the input and resolve's
// result cells, the confidence with a decimal comma, and the review of
// choice (-1 none of these, else the candidate picked), reviewed.
func pageRow(cells []string, choice int) []string {
	row := append([]string(nil), cells...)
	row[3+4] = strings.Replace(row[3+4], ".", ",", 1)
	return append(row, "true", fmt.Sprint(choice >= 0), fmt.Sprint(choice < 0))
}

// checkGermanCSV finds the companies again on the German page, reviews a
// row as "none of these" and downloads the table: the reasons are the
// service's German sentences, the confidence has a decimal comma (the
// file is separated by semicolons), and the reviewer's columns say which
// row was reviewed and how. The filter shows only the rows to review.
func (p *pageDriver) checkGermanCSV(toReview, withoutCandidate int) {
	p.t.Helper()
	p.run("find the companies again in German", chromedp.Click(chromedp.CSS("#many-start")))
	p.waitJS("every row answered in German", `document.querySelector("#many-status").textContent.startsWith("50 Zeilen gesucht")`)
	p.run("show only the rows to review", chromedp.Click(chromedp.CSS("#many-filter")))
	shown := eval[[]manyRowsView](p, "read the filtered table", readManyRows)
	if len(shown) != toReview+withoutCandidate {
		p.t.Errorf("the filter shows %d rows, want the %d to review and the %d without candidate", len(shown), toReview, withoutCandidate)
	}
	none := -1
	for _, r := range shown {
		switch {
		case r.Name == "" && !r.Review:
			if !strings.Contains(r.WhyNone, "„") { // the German notes quote with „ “
				p.t.Errorf("the filter shows row %d without candidate saying %q, want the German notes", r.Row+1, r.WhyNone)
			}
		case !r.Review || r.Reviewed || r.Label == "exact":
			p.t.Errorf("the filter shows row %d, which is not to review: %+v", r.Row+1, r)
		case none < 0:
			none = r.Row
		}
	}
	p.openReview(none)
	sel := fmt.Sprintf(`#many-rows tr[data-row="%d"]`, none)
	p.run("pick none of these", chromedp.Click(chromedp.CSS(`#many-rows .review input[value="-1"]`)),
		chromedp.Click(chromedp.CSS("#many-rows .review-save")))
	p.waitJS("the reviewed row leaves the filtered table", fmt.Sprintf(`document.querySelector(%q) === null`, sel))
	if n := len(eval[[]manyRowsView](p, "read the filtered table", readManyRows)); n != toReview+withoutCandidate-1 {
		p.t.Errorf("after a review the filter shows %d rows, want %d", n, toReview+withoutCandidate-1)
	}
	p.run("show every row", chromedp.Click(chromedp.CSS("#many-filter")))
	got := e2e.ReadSheet(p.t, []byte(strings.TrimPrefix(p.downloadMany(), sheet.BOM)), ';')
	if !slices.Equal(got[0][3:], pageResultColumns) {
		p.t.Fatalf("German download header %q, want the input's and %q", got[0], pageResultColumns)
	}
	german, english := 0, 0
	for i, r := range got[1:] {
		reviewed := [3]string{r[11], r[12], r[13]}
		want := [3]string{"false", "false", "false"}
		if i == none {
			want = [3]string{"true", "false", "true"}
			if r[3] != "" || r[4] != "" {
				p.t.Errorf("row %d reviewed as none of these holds %q (%s)", i+1, r[4], r[3])
			}
		}
		if reviewed != want {
			p.t.Errorf("row %d: reviewed, chosen_by_hand, none_of_these = %v, want %v", i+1, reviewed, want)
		}
		if strings.Contains(r[7], ".") || r[7] != "" && r[7] != "1" && !strings.Contains(r[7], ",") {
			p.t.Errorf("row %d: confidence %q, want a decimal comma", i+1, r[7])
		}
		if strings.Contains(r[10], "stimmt") {
			german++
		}
		if strings.Contains(r[10], "matches") || strings.Contains(r[10], "differs") {
			english++
		}
	}
	if german == 0 || english > 0 {
		p.t.Errorf("German download: %d rows with German reasons, %d with English ones", german, english)
	}
}

// checkManyPhoneTable checks the review table on a 375 px phone: it does
// not scroll sideways, and every row's match and action lie on the
// screen.
func (p *pageDriver) checkManyPhoneTable() {
	p.t.Helper()
	type fit struct {
		Scrolls bool     `json:"scrolls"`
		Off     []string `json:"off"`
	}
	got := eval[fit](p, "measure the table on a phone", `(() => {
		const box = document.querySelector("#many .table-box");
		const off = [...document.querySelectorAll("#many-rows > tr[data-row]")].flatMap(tr =>
			[...tr.querySelectorAll(".match, .row-actions button")].filter(e => { const r = e.getBoundingClientRect(); return r.left < 0 || r.right > 375; })
				.map(e => tr.dataset.row + ": " + e.className));
		return {scrolls: box.scrollWidth > box.clientWidth + 1, off};
	})()`)
	if got.Scrolls || len(got.Off) > 0 {
		p.t.Errorf("on a phone the table scrolls sideways (%v) or shows these off the screen: %v", got.Scrolls, got.Off)
	}
}
