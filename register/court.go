package register

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"strings"
	"sync"

	"companydocs/textfold"
)

// Court is a German register court.
type Court struct {
	// Code is the XJustiz code as used by register dumps, e.g. "D2601V".
	Code string
	// Name is the short display name, e.g. "München", "Berlin (Charlottenburg)".
	Name string
	// GLEIFRA is the GLEIF registration authority code, e.g. "RA000304".
	GLEIFRA string
	// State is the federal state.
	State string
	// Former is set for a court that no longer keeps registers: its entries
	// moved to another court, and it appears only as the former court of a
	// reference ("Oldenburg (Oldenburg) früher Varel HRB 53").
	Former bool
}

//go:generate go test -run TestCourtTableGenerated -update-courts .

// courtsCSV is the court table generated from the court lists in the shared
// data directory (see courts_gen_test.go): XJustiz codes (XJustiz/XUnternehmen
// code lists), display names as OffeneRegister.de writes them (CC BY 4.0),
// GLEIF registration authority codes (GLEIF RA list, CC0).
//
//go:embed courts.csv
var courtsCSV string

// courtTable indexes the embedded court table.
type courtTable struct {
	byCode    map[string]*Court // canonical and alternative codes, with and without register letter
	byRA      map[string]*Court
	current   map[string]*Court // folded name or alias -> court keeping registers
	anyCourt  map[string]*Court // folded name or alias -> any court, former ones included
	courtList []Court
}

var courts = sync.OnceValue(func() *courtTable {
	t, err := parseCourtTable(courtsCSV)
	if err != nil {
		panic(fmt.Sprintf("embedded court table: %v", err))
	}
	return t
})

// CourtByCode returns the court with the given XJustiz code. Codes with and
// without the register letter ("D2601" and "D2601V") name the same court.
func CourtByCode(code string) (Court, bool) {
	c, ok := courts().byCode[strings.ToUpper(strings.TrimSpace(code))]
	if !ok {
		c, ok = courts().byCode[baseCourtCode(strings.ToUpper(strings.TrimSpace(code)))]
	}
	if !ok {
		return Court{}, false
	}
	return *c, true
}

// CourtByRA returns the court registered at GLEIF under the RA code.
func CourtByRA(ra string) (Court, bool) {
	c, ok := courts().byRA[strings.ToUpper(strings.TrimSpace(ra))]
	if !ok {
		return Court{}, false
	}
	return *c, true
}

// LookupCourt finds a court by a name or alias as people write it
// ("München", "Amtsgericht München", "AG Muenchen", "Charlottenburg",
// "Berlin"), ignoring case, umlaut spelling and punctuation. Only courts
// that keep registers resolve; former courts are found by CourtByCode or
// after "früher" in ParseRef.
func LookupCourt(name string) (Court, bool) {
	return lookupCourtIn(courts().current, name)
}

func lookupCourtIn(m map[string]*Court, name string) (Court, bool) {
	return lookupCourtKeys(m, courtKeys(name))
}

// lookupCourtKeys looks a court up by its folded keys (see courtKeys).
func lookupCourtKeys(m map[string]*Court, keys []string) (Court, bool) {
	for _, key := range keys {
		if c, ok := m[key]; ok {
			return *c, true
		}
	}
	return Court{}, false
}

// courtPrefixWords are the words people put before a court name, in
// German and in the English of imprints ("Local Court of Siegburg",
// "Register court: District Court Stuttgart", "the commercial register of
// the Local Court of Bonn").
var courtPrefixWords = map[string]bool{
	"amtsgericht": true, "ag": true, "registergericht": true,
	"handelsregister": true, "hr": true, "reg": true, "amtsg": true,
	"registergerichts": true, "amtsgerichts": true, "beim": true, "des": true,
	"local": true, "district": true, "court": true, "registry": true, "register": true,
	"commercial": true, "of": true, "the": true,
}

// courtKeys returns the folded spellings under which a court name is looked
// up: Fold and FoldPlain, each without the leading words "Amtsgericht",
// "AG", "Registergericht" and the like.
func courtKeys(name string) []string {
	return courtKeysOf(textfold.Tokens(textfold.Fold(name)), textfold.Tokens(textfold.FoldPlain(name)))
}

// courtKeysOf builds the lookup keys from the folded and plain-folded
// tokens of a name.
func courtKeysOf(folded, plain []string) []string {
	keys := make([]string, 0, 2)
	for _, toks := range [][]string{folded, plain} {
		for len(toks) > 1 && courtPrefixWords[toks[0]] {
			toks = toks[1:]
		}
		key := strings.Join(toks, " ")
		if key != "" && (len(keys) == 0 || keys[0] != key) {
			keys = append(keys, key)
		}
	}
	return keys
}

// baseCourtCode strips the register letter from an XJustiz code: "D2601V"
// -> "D2601". Codes are a letter, four digits and an optional letter.
func baseCourtCode(code string) string {
	if len(code) == 6 && isUpper(code[5]) {
		return code[:5]
	}
	return code
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// Court table columns.
const (
	colCode = iota
	colName
	colState
	colRA
	colStatus
	colAltCodes
	colAliases
	courtColumns
)

// parseCourtTable reads the court table CSV (header line first).
func parseCourtTable(data string) (*courtTable, error) {
	r := csv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = courtColumns
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read court csv: %w", err)
	}
	t := &courtTable{
		byCode:   map[string]*Court{},
		byRA:     map[string]*Court{},
		current:  map[string]*Court{},
		anyCourt: map[string]*Court{},
	}
	t.courtList = make([]Court, 0, len(rows))
	for _, row := range rows[1:] {
		t.courtList = append(t.courtList, Court{
			Code: row[colCode], Name: row[colName], State: row[colState],
			GLEIFRA: row[colRA], Former: row[colStatus] == "former",
		})
	}
	for i, row := range rows[1:] {
		if err := t.index(&t.courtList[i], row); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// index adds one court under its codes, RA code and aliases. The generator
// has removed ambiguous aliases, so a clash here is an error.
func (t *courtTable) index(c *Court, row []string) error {
	codes := append([]string{c.Code}, splitList(row[colAltCodes])...)
	for _, code := range codes {
		for _, k := range []string{code, baseCourtCode(code)} {
			if prev, ok := t.byCode[k]; ok && prev != c {
				return fmt.Errorf("court code %s claimed by %s and %s", k, prev.Code, c.Code)
			}
			t.byCode[k] = c
		}
	}
	if c.GLEIFRA != "" {
		if _, ok := t.byRA[c.GLEIFRA]; !ok {
			t.byRA[c.GLEIFRA] = c
		}
	}
	for _, alias := range append([]string{c.Name}, splitList(row[colAliases])...) {
		for _, key := range courtKeys(alias) {
			if prev, ok := t.anyCourt[key]; !ok || prev.Former && !c.Former {
				t.anyCourt[key] = c
			}
			if !c.Former {
				t.current[key] = c
			}
		}
	}
	return nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "|")
}
