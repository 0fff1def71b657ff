package register

import (
	"bytes"
	"encoding/csv"
	"flag"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"companydocs/textfold"
)

// The court table register/courts.csv is generated from the court lists in the
// shared data directory. Regenerate it after changing this file or the
// lists with:
//
//	go test -run TestCourtTableGenerated -update-courts ./register
var updateCourts = flag.Bool("update-courts", false, "regenerate register/courts.csv from the shared court lists")

// courtMerges folds codes that the sources list separately into the code the
// register dumps use: B8536 is the register department of Amtsgericht
// Freiburg, whose entries OffeneRegister files under B1204.
var courtMerges = map[string]string{"B8536": "B1204"}

// manualCourtAliases are names people write that no source list spells out,
// English names of the big courts among them. They win over derived aliases.
var manualCourtAliases = map[string][]string{
	"B1204":  {"Freiburg im Breisgau", "Freiburg i. Br.", "Freiburg/Breisgau"},
	"D2304V": {"Kempten/Allgäu"},
	"D2601V": {"Munich"},
	"D3310V": {"Nuremberg"},
	"D3508V": {"Weiden in der Oberpfalz", "Weiden/OPf."},
	"F1103R": {"Berlin", "Charlottenburg", "Berlin-Charlottenburg", "Berlin Charlottenburg", "Charlottenburg-Berlin"},
	"G1207":  {"Frankfurt (Oder)", "Frankfurt an der Oder", "Frankfurt a. d. Oder", "Frankfurt/O."},
	"K1101R": {"Hansestadt Hamburg"},
	"M1201":  {"Frankfurt", "Frankfurt/Main", "Frankfurt a. M.", "Frankfurt a. Main", "Frankfurt/M.", "Frankfurt Main", "Frankfort"},
	"M1202":  {"Bad Homburg vor der Höhe"},
	"P1103":  {"Brunswick"},
	"P2305":  {"Hanover"},
	"P3210":  {"Oldenburg", "Oldenburg i. O.", "Oldenburg in Oldenburg"},
	"R3306":  {"Cologne"},
	"T3104V": {"Ludwigshafen", "Ludwigshafen am Rhein"},
	"V1111":  {"St. Ingbert", "Sankt Ingbert"},
	"V1112":  {"St. Wendel", "Sankt Wendel"},
}

// centralisedStates keep their registers at a few courts only; the other
// courts these states list on the register portal hold no registers.
var centralisedStates = map[string]bool{
	"Baden-Württemberg": true, "Sachsen": true, "Thüringen": true,
	"Mecklenburg-Vorpommern": true, "Sachsen-Anhalt": true,
}

type genCourt struct {
	codes   []string // first is canonical
	name    string
	state   string
	ra      string
	former  bool
	records int
	manual  []string
	exact   []string // names as the sources spell them
}

func TestCourtTableGenerated(t *testing.T) {
	got := generateCourtTable(t)
	want, err := os.ReadFile("courts.csv")
	if *updateCourts {
		if err := os.WriteFile("courts.csv", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("register/courts.csv is out of date: run go test -run TestCourtTableGenerated -update-courts ./register")
	}
}

func readCSV(tb testing.TB, rel string) []map[string]string {
	tb.Helper()
	f, err := os.Open(realFile(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatalf("%s: %v", rel, err)
	}
	header := rows[0]
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	out := make([]map[string]string, 0, len(rows)-1)
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, h := range header {
			m[h] = strings.TrimSpace(row[i])
		}
		out = append(out, m)
	}
	return out
}

func generateCourtTable(tb testing.TB) []byte {
	tb.Helper()
	consolidated := readCSV(tb, "courts/german_registry_courts_consolidated.csv")
	former := readCSV(tb, "courts/offeneregister_former_registrar_codes.csv")
	raList := readCSV(tb, "gleif/ra_list_v1.7_DE.csv")
	xjustiz := map[string]string{}
	for _, r := range readCSV(tb, "courts/xjustiz_gds_gerichte_2_8_all.csv") {
		xjustiz[r["code"]] = r["name"]
	}
	raName := map[string]string{}
	for _, r := range raList {
		raName[r["Registration Authority Code"]] = r["Local name of organisation responsible for the Register"]
	}
	formerName := map[string]string{}
	for _, r := range former {
		formerName[r["former_court_code"]] = r["former_registrar_name"]
	}

	groups := map[string]*genCourt{} // by base code
	group := func(code string) *genCourt {
		base := baseCourtCode(code)
		if m, ok := courtMerges[base]; ok {
			base = m
		}
		g, ok := groups[base]
		if !ok {
			g = &genCourt{}
			groups[base] = g
		}
		return g
	}
	currentPrefix := map[string]bool{}
	for _, r := range consolidated {
		code := r["code"]
		g := group(code)
		g.codes = append(g.codes, code)
		if r["is_offeneregister_current_court_prefix"] == "yes" {
			currentPrefix[code] = true
			g.codes[0], g.codes[len(g.codes)-1] = code, g.codes[0]
		}
		if g.state == "" {
			g.state = r["federal_state"]
		}
		n, _ := strconv.Atoi(r["offeneregister_records_in_sample_chunks"])
		g.records += n
		if r["offeneregister_registrar"] != "" && (g.name == "" || currentPrefix[code]) {
			g.name = r["offeneregister_registrar"]
		}
		if g.ra == "" {
			g.ra = r["gleif_ra_code_guess"]
		}
		g.exact = append(g.exact, r["offeneregister_registrar"], r["xjustiz_gds_name"], r["xunternehmen_label"], r["handelsregister_de_2021_name"])
		if !strings.Contains(r["xjustiz_gds_name"], "Zweigstelle") {
			// a branch shares the RA code of its court, not its name
			g.exact = append(g.exact, raName[r["gleif_ra_code_guess"]])
		}
	}
	for _, r := range former {
		code := r["former_court_code"]
		g := group(code)
		if !containsString(g.codes, code) {
			g.codes = append(g.codes, code)
		}
		g.exact = append(g.exact, r["former_registrar_name"], r["xjustiz_gds_name"])
		if g.name == "" {
			g.name = r["former_registrar_name"]
		}
	}
	var out []*genCourt
	for base, g := range groups {
		canonical := g.codes[0]
		if g.name == "" {
			g.name = formerName[canonical]
		}
		if g.name == "" {
			g.name = stripCourtWords(firstNonEmpty(pick(consolidated, canonical, "handelsregister_de_2021_name"), xjustiz[canonical]))
		}
		hasCurrent := false
		for _, c := range g.codes {
			hasCurrent = hasCurrent || currentPrefix[c]
		}
		dissolved := strings.HasPrefix(xjustiz[canonical], "aufgelöst")
		_, formerCode := formerName[canonical]
		g.former = !hasCurrent && (dissolved || formerCode || centralisedStates[g.state])
		if g.state == "" {
			g.state = stateOfCode(base)
		}
		for code, aliases := range manualCourtAliases {
			if containsString(g.codes, code) {
				g.manual = aliases
			}
		}
		out = append(out, g)
	}
	for merged, into := range courtMerges {
		g := groups[into]
		if !containsString(g.codes, merged) {
			g.codes = append(g.codes, merged)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].codes[0] < out[j].codes[0] })
	return renderCourtTable(tb, out)
}

// renderCourtTable writes the table, keeping for every court only the
// aliases that name it unambiguously (manual aliases first, then names as
// the sources spell them, then the part of a name before a parenthesis or
// comma). An alias two courts of the same rank claim is left out.
func renderCourtTable(tb testing.TB, out []*genCourt) []byte {
	tb.Helper()
	type claim struct {
		court *genCourt
		rank  int
	}
	claims := map[string][]claim{}
	aliasesOf := map[*genCourt][]string{}
	for _, g := range out {
		seen := map[string]bool{}
		add := func(alias string, rank int) {
			alias = stripCourtWords(alias)
			if len([]rune(alias)) < 4 && alias != g.name || seen[textfold.Fold(alias)] {
				// short labels such as "Jen" are truncations, not names
				return
			}
			seen[textfold.Fold(alias)] = true
			aliasesOf[g] = append(aliasesOf[g], alias)
			for _, k := range courtKeys(alias) {
				claims[k] = append(claims[k], claim{g, rank})
			}
		}
		add(g.name, 0)
		for _, a := range g.manual {
			add(a, 0)
		}
		for _, a := range g.exact {
			add(a, 1)
		}
		for _, a := range append([]string{g.name}, g.exact...) {
			a = stripCourtWords(a)
			if i := strings.IndexAny(a, "(,"); i > 0 {
				add(a[:i], 2)
			}
			if i := strings.Index(a, " Zweigstelle"); i > 0 {
				add(a[:i], 3)
			}
		}
	}
	winner := func(key string, g *genCourt) bool {
		best, n := -1, 0
		for _, c := range claims[key] {
			rank := 2 * c.rank
			if c.court.former {
				rank++ // at equal rank a current court wins over a former one
			}
			switch {
			case best == -1 || rank < best:
				best, n = rank, 1
			case rank == best:
				n++
			}
		}
		for _, c := range claims[key] {
			rank := 2 * c.rank
			if c.court.former {
				rank++
			}
			if c.court == g && rank == best && n == 1 {
				return true
			}
		}
		return false
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"code", "name", "state", "gleif_ra", "status", "alt_codes", "aliases"})
	for _, g := range out {
		var aliases []string
		for _, a := range aliasesOf[g] {
			ok := true
			for _, k := range courtKeys(a) {
				ok = ok && winner(k, g)
			}
			if ok && a != g.name {
				aliases = append(aliases, a)
			}
		}
		if !winnerAll(courtKeys(g.name), func(k string) bool { return winner(k, g) }) {
			tb.Errorf("court %s: its name %q is claimed by another court", g.codes[0], g.name)
		}
		status := "current"
		if g.former {
			status = "former"
		}
		alt := append([]string(nil), g.codes[1:]...)
		sort.Strings(alt)
		w.Write([]string{g.codes[0], g.name, g.state, g.ra, status, strings.Join(alt, "|"), strings.Join(aliases, "|")})
	}
	w.Flush()
	return buf.Bytes()
}

func winnerAll(keys []string, f func(string) bool) bool {
	for _, k := range keys {
		if !f(k) {
			return false
		}
	}
	return true
}

// stripCourtWords turns a source's court label into a place name:
// "Registergericht Amtsgericht München" -> "München".
func stripCourtWords(s string) string {
	s = strings.TrimPrefix(s, "aufgelöst-")
	for _, p := range []string{"Registergericht ", "Amtsgericht ", "Local Court "} {
		s = strings.TrimPrefix(s, p)
	}
	for _, suffix := range []string{", Handels- und Genossenschaftsregister", ", Zentralisierter Bereich Handelsregister", " - Handels-, Genossenschafts- und Partnerschaftsregister"} {
		s = strings.TrimSuffix(s, suffix)
	}
	return strings.TrimRight(strings.TrimSpace(s), "_")
}

func pick(rows []map[string]string, code, col string) string {
	for _, r := range rows {
		if r["code"] == code {
			return r[col]
		}
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// stateOfCode derives the federal state from the first letter of an XJustiz
// court code, for former courts the consolidated list does not carry.
func stateOfCode(code string) string {
	states := map[byte]string{
		'B': "Baden-Württemberg", 'D': "Bayern", 'F': "Berlin", 'G': "Brandenburg",
		'H': "Bremen", 'K': "Hamburg", 'M': "Hessen", 'N': "Mecklenburg-Vorpommern",
		'P': "Niedersachsen", 'R': "Nordrhein-Westfalen", 'T': "Rheinland-Pfalz",
		'V': "Saarland", 'U': "Sachsen", 'W': "Sachsen-Anhalt", 'X': "Schleswig-Holstein",
		'Y': "Thüringen",
	}
	if code == "" {
		return ""
	}
	return states[code[0]]
}
