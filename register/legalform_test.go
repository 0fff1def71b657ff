package register

import (
	"fmt"
	"strings"
	"testing"

	"companydocs/textfold"
)

func TestSplitLegalForm(t *testing.T) {
	tests := []struct {
		name, base, code string
	}{
		// real names from the register dumps, one per spelling
		{"Nutzfahrzeugtechnik Dufner GmbH", "nutzfahrzeugtechnik dufner", "GmbH"},
		{"HAFEPA GmbH", "hafepa", "GmbH"},
		{"Haas + Engler GmbH", "haas & engler", "GmbH"},
		{"DTS Treuhand- und Steuerberatungsgesellschaft mbH", "dts treuhand & steuerberatungsgesellschaft", "GmbH"},
		{"Spürgin Verwaltungsgesellschaft mbH", "spuergin verwaltungsgesellschaft", "GmbH"},
		{"Wohnwelt Emmendingen Möbelvertriebsgesellschaft m.b.H.", "wohnwelt emmendingen moebelvertriebsgesellschaft", "GmbH"},
		{"Schmitz G.m.b.H.", "schmitz", "GmbH"},
		{"Otto Sick GMBH", "otto sick", "GmbH"},
		{"Bäckerei Gesellschaft mit beschränkter Haftung", "baeckerei", "GmbH"},
		{"Berolina Baugesellschaft mit beschränkter Haftung", "berolina baugesellschaft", "GmbH"},
		{"Solidux Gesellschaft für Schallschutz mit beschränkter Haftung", "solidux gesellschaft fuer schallschutz", "GmbH"},
		{"Deutsche Mibos - Gesellschaft mit beschränkter Haftung Minameyer & Co.", "deutsche mibos minameyer & co", "GmbH"},
		{"Müller GmbH Zweigniederlassung Köln", "mueller zweigniederlassung koeln", "GmbH"},
		{"Müller Verwaltungs-GmbH", "mueller verwaltungs", "GmbH"},
		{"Lebenshilfe gGmbH", "lebenshilfe", "gGmbH"},
		{"SCI Beteiligungs UG (haftungsbeschränkt)", "sci beteiligungs", "UG (haftungsbeschränkt)"},
		{"Start Unternehmergesellschaft (haftungsbeschränkt)", "start", "UG (haftungsbeschränkt)"},
		{"Holz UG (haftungsbeschränkt) & Co. KG", "holz", "UG (haftungsbeschränkt) & Co. KG"},
		{"Voith Turbo BHS Getriebe Holding GmbH & Co. KG", "voith turbo bhs getriebe holding", "GmbH & Co. KG"},
		{"Sphinx Electronics GmbH & Co KG", "sphinx electronics", "GmbH & Co. KG"},
		{"Müller GmbH u. Co. KG", "mueller", "GmbH & Co. KG"},
		{"Müller GmbH + Co. KG", "mueller", "GmbH & Co. KG"},
		{"Müller GmbH & Co.KG", "mueller", "GmbH & Co. KG"},
		{"Müller GmbH & Co. Kommanditgesellschaft", "mueller", "GmbH & Co. KG"},
		{"Bau Verwaltungsgesellschaft mbH & Co. KG", "bau verwaltungsgesellschaft", "GmbH & Co. KG"},
		{"Handel GmbH & Co. OHG", "handel", "GmbH & Co. OHG"},
		{"Hoteltouristik Ltd. & Co KG", "hoteltouristik", "Ltd. & Co. KG"},
		{"Merck AG & Co. KG", "merck", "AG & Co. KG"},
		{"Fresenius SE & Co. KGaA", "fresenius", "SE & Co. KGaA"},
		{"Porsche SE & Co. KG", "porsche", "SE & Co. KG"},
		{"Familie Stiftung & Co. KG", "familie", "Stiftung & Co. KG"},
		{"Wilhelm Zeh K.G.", "wilhelm zeh", "KG"},
		{"Gartenbau Walter und Mirja Dauchenbeck KG", "gartenbau walter & mirja dauchenbeck", "KG"},
		{"Müller Kommanditgesellschaft", "mueller", "KG"},
		{"Schmidt OHG", "schmidt", "OHG"},
		{"Schmidt oHG", "schmidt", "OHG"},
		{"Schmidt offene Handelsgesellschaft", "schmidt", "OHG"},
		{"Wacker Chemie AG", "wacker chemie", "AG"},
		{"Deutsche Bank Aktiengesellschaft", "deutsche bank", "AG"},
		{"Allianz SE", "allianz", "SE"},
		{"Henkel KGaA", "henkel", "KGaA"},
		{"Martin Weber e. K.", "martin weber", "e.K."},
		{"Optimum Pet Care, Inh. Ulrich Palm e.Kfm.", "optimum pet care inh ulrich palm", "e.K."},
		{"Mode Anna Schulz e. Kfr.", "mode anna schulz", "e.K."},
		{"Apotheke Hans Meier eingetragener Kaufmann", "apotheke hans meier", "e.K."},
		{"Zunft der Fasnetrufer e.V.", "zunft der fasnetrufer", "e.V."},
		{"Musikverein Freiburg-Landwasser e. V.", "musikverein freiburg landwasser", "e.V."},
		{"Tennisclub eV", "tennisclub", "e.V."},
		{"Schützenverein eingetragener Verein", "schuetzenverein", "e.V."},
		{"Volksbank Freiburg eG", "volksbank freiburg", "eG"},
		{"Raiffeisenbank eingetragene Genossenschaft", "raiffeisenbank", "eG"},
		{"Spar- und Darlehnskasse eGmbH", "spar & darlehnskasse", "eG"},
		{"Meier Rechtsanwälte PartG mbB", "meier rechtsanwaelte", "PartG mbB"},
		{"Schulz Steuerberater Partnerschaftsgesellschaft mbB", "schulz steuerberater", "PartG mbB"},
		{"Arztpraxis Müller PartG", "arztpraxis mueller", "PartG"},
		{"Müller und Schmidt Partnerschaft", "mueller & schmidt", "PartG"},
		{"Gothaer VVaG", "gothaer", "VVaG"},
		{"Acme Ltd.", "acme", "Ltd."},
		{"Acme Limited", "acme", "Ltd."},
		{"Holding B.V.", "holding", "B.V."},
		{"Invest S.à r.l.", "invest", "S.à r.l."},
		{"Tech Inc.", "tech", "Inc."},
		{"Cloud LLC", "cloud", "LLC"},
		{"Vodafone Group plc", "vodafone group", "plc"},
		{"Stiftung Warentest", "warentest", "Stiftung"},
		{"AG Wohnen GmbH", "ag wohnen", "GmbH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, form, ok := SplitLegalForm(tt.name)
			if !ok || strings.Join(base, " ") != tt.base || form.Code != tt.code {
				t.Fatalf("SplitLegalForm(%q) = %q, %q, %v; want %q, %q", tt.name, base, form.Code, ok, tt.base, tt.code)
			}
		})
	}
	// names without a legal form, including names that contain form-like words
	for _, name := range []string{"Helmut Holdermann & Co.", "Kunstverlag Braun & Co.", "Verwaltungsgesellschaft",
		"AG Wohnen", "Müller", "", "Ageplan Beratung", "Segelclub Kiel", "Kg Transporte"} {
		t.Run("no form "+name, func(t *testing.T) {
			if base, form, ok := SplitLegalForm(name); ok {
				t.Fatalf("SplitLegalForm(%q) = %q, %+v; want no form", name, base, form)
			}
		})
	}
}

func TestNameKey(t *testing.T) {
	same := [][]string{
		{"Müller GmbH", "MUELLER G.m.b.H.", "Mueller Gesellschaft mit beschränkter Haftung", "müller mbH", "Müller GmbH."},
		{"Schmidt GmbH & Co. KG", "Schmidt GmbH u. Co. KG", "SCHMIDT GMBH + CO KG", "Schmidt GmbH & Co.KG"},
		{"Zunft der Fasnetrufer e.V.", "Zunft der Fasnetrufer e. V.", "Zunft der Fasnetrufer eV", "Zunft der Fasnetrufer eingetragener Verein"},
		{"Start UG (haftungsbeschränkt)", "Start Unternehmergesellschaft (haftungsbeschränkt)", "START UG (haftungsbeschraenkt)"},
	}
	for _, group := range same {
		t.Run(group[0], func(t *testing.T) {
			want := NameKey(group[0])
			for _, name := range group[1:] {
				if got := NameKey(name); got != want {
					t.Errorf("NameKey(%q) = %q, want %q like %q", name, got, want, group[0])
				}
			}
		})
	}
	if a, b := NameKey("Müller GmbH"), NameKey("Müller AG"); a == b {
		t.Errorf("GmbH and AG share the key %q", a)
	}
	if got := NameKey("Müller GmbH"); got != "mueller|GmbH" {
		t.Errorf("NameKey(Müller GmbH) = %q", got)
	}
	if got := NameKey("Kunstverlag Braun & Co."); got != "kunstverlag braun & co|" {
		t.Errorf("NameKey without form = %q", got)
	}
}

// TestSplitLegalFormRealNames checks the recogniser against the register
// type of real entries: corporations (HRB) carry a form in their name, and
// most associations (VR) end in "e.V." (a good quarter are "Verein ..."
// without it).
func TestSplitLegalFormRealNames(t *testing.T) {
	recs := readOCRecords(t, "ocdata.chunk17.jsonl.bz2", 5000)
	byType := map[string][2]int{} // type -> recognised, total
	var missed []string
	for _, r := range recs {
		_, form, ok := SplitLegalForm(r.Name)
		c := byType[r.Attrs.Type]
		c[1]++
		if ok {
			c[0]++
		} else if r.Attrs.Type == "HRB" && len(missed) < 20 {
			missed = append(missed, r.Name)
		}
		byType[r.Attrs.Type] = c
		if r.Attrs.Type == "VR" && ok && form.Code != "e.V." && !strings.HasPrefix(form.Code, "GmbH") {
			t.Logf("association with form %s: %q", form.Code, r.Name)
		}
	}
	if c := byType["HRB"]; float64(c[0]) < 0.97*float64(c[1]) {
		t.Errorf("form recognised in %d of %d HRB names; missed e.g. %q", c[0], c[1], missed)
	}
	if c := byType["VR"]; float64(c[0]) < 0.70*float64(c[1]) {
		t.Errorf("form recognised in %d of %d VR names", c[0], c[1])
	}
}

func ExampleSplitLegalForm() {
	base, form, ok := SplitLegalForm("Wohnwelt Möbelvertriebsgesellschaft m.b.H. & Co. KG")
	fmt.Println(base, form.Code, form.Words, ok)
	// Output: [wohnwelt moebelvertriebsgesellschaft] GmbH & Co. KG [m b h & co kg] true
}

func ExampleNameKey() {
	fmt.Println(NameKey("Müller GmbH"))
	fmt.Println(NameKey("MUELLER G.m.b.H."))
	// Output:
	// mueller|GmbH
	// mueller|GmbH
}

// nameSeeds are real names from the register dumps.
var nameSeeds = []string{
	"Nutzfahrzeugtechnik Dufner GmbH", "Haas + Engler GmbH", "Deutsche Mibos - Gesellschaft mit beschränkter Haftung Minameyer & Co.",
	"Optimum Pet Care, Inh. Ulrich Palm e.Kfm.", "Musikverein Freiburg-Landwasser e. V.", "Hoteltouristik Ltd. & Co KG",
	"SCI Beteiligungs UG (haftungsbeschränkt)", "Wilhelm Zeh K.G.", "Regionaler Wohnungsbau GmbH (REWO)", "Øresund ß ẞ İ",
	"u. u.u. und+&", "McDonald's", "decomposed u\u0308ber",
}

func FuzzSplitLegalForm(f *testing.F) {
	for _, s := range nameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		base, form, ok := SplitLegalForm(s)
		toks := textfold.Tokens(textfold.Fold(s))
		if !ok {
			if form.Code != "" || strings.Join(base, " ") != strings.Join(toks, " ") {
				t.Fatalf("%q: no form but base %q, form %+v", s, base, form)
			}
			return
		}
		if form.Code == "" || len(form.Words) == 0 || len(base)+len(form.Words) != len(toks) {
			t.Fatalf("%q: base %q + form %+v do not add up to %q", s, base, form, toks)
		}
		if !strings.Contains(" "+strings.Join(toks, " ")+" ", " "+strings.Join(form.Words, " ")+" ") {
			t.Fatalf("%q: form words %q are not in the name", s, form.Words)
		}
		if key := NameKey(s); !strings.HasSuffix(key, "|"+form.Code) {
			t.Fatalf("%q: NameKey %q does not end in the form", s, key)
		}
		textfold.Phonetic(s)
	})
}

// TestAbbreviatedNamesShareTheirKey: a name as a list abbreviates it
// and as the register writes it have one name key, so that the exact
// name match holds between them (real names of the registers).
func TestAbbreviatedNamesShareTheirKey(t *testing.T) {
	for _, tc := range [][2]string{
		{"Gebr. Hoffmann Eisenwaren - Handlung KG", "Gebrüder Hoffmann Eisenwaren - Handlung KG"},
		{"Dt. Lebens-Rettungs-Ges. e.V.", "Deutsche Lebens-Rettungs-Gesellschaft e.V."},
		{"Müller Grdst.-Verw. GmbH", "Müller Grundstücks-Verwaltung GmbH"},
		{"Rheinland Immob. Beteil. GmbH", "Rheinland Immobilien Beteiligungs GmbH"},
		{"Int. Bund e.V.", "International Bund e.V."},
		{"Schneider StBG mbH", "Schneider Steuerberatungsgesellschaft mbH"},
		{"Schneider WPG GmbH", "Schneider Wirtschaftsprüfungsgesellschaft GmbH"},
		{"Schneider RA-Ges. mbH", "Schneider Rechtsanwaltsgesellschaft mbH"},
		{"Müller u. Söhne GmbH", "Müller und Söhne GmbH"},
		{"Müller Ges. mbH", "Müller Gesellschaft mbH"},
	} {
		if a, b := NameKey(tc[0]), NameKey(tc[1]); a != b {
			t.Errorf("NameKey(%q) = %q, NameKey(%q) = %q; want one key", tc[0], a, tc[1], b)
		}
	}
}
