package register

import (
	"fmt"
	"strings"
	"testing"
)

func TestCourtByCode(t *testing.T) {
	tests := []struct {
		name, code, wantCode, wantName string
		former                         bool
	}{
		{"München as in dumps", "D2601V", "D2601V", "München", false},
		{"München without register letter", "D2601", "D2601V", "München", false},
		{"Charlottenburg with letter", "F1103R", "F1103R", "Berlin (Charlottenburg)", false},
		{"Charlottenburg without letter", "F1103", "F1103R", "Berlin (Charlottenburg)", false},
		{"Hamburg", "K1101R", "K1101R", "Hamburg", false},
		{"Hamburg without letter", "K1101", "K1101R", "Hamburg", false},
		{"Kiel", "X1517R", "X1517R", "Kiel", false},
		{"Kiel without letter", "X1517", "X1517R", "Kiel", false},
		{"Freiburg as in dumps", "B1204", "B1204", "Freiburg", false},
		{"Freiburg register department code", "B8536", "B1204", "Freiburg", false},
		{"Stendal", "W1215", "W1215", "Stendal", false},
		{"Oldenburg", "P3210", "P3210", "Oldenburg (Oldenburg)", false},
		{"Kempten", "D2304V", "D2304V", "Kempten (Allgäu)", false},
		{"Weiden", "D3508V", "D3508V", "Weiden i. d. OPf.", false},
		{"former court Dessau", "W1104", "W1104", "Dessau", true},
		{"former court Varel", "P3211", "P3211", "Varel", true},
		{"former court Bremerhaven", "H1102", "H1102", "Bremerhaven", true},
		{"former Fürth code with letter", "D3304V", "D3304V", "Fürth", false},
		{"lower case", "d2601v", "D2601V", "München", false},
		{"Jena with letter", "Y1206V", "Y1206", "Jena", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := CourtByCode(tt.code)
			if !ok || c.Code != tt.wantCode || c.Name != tt.wantName || c.Former != tt.former {
				t.Fatalf("CourtByCode(%q) = %+v, %v; want %s %q former=%v", tt.code, c, ok, tt.wantCode, tt.wantName, tt.former)
			}
		})
	}
	for _, code := range []string{"", "D9999V", "HRB", "F1112R", "9A0000", "D2601VV"} {
		t.Run("unknown "+code, func(t *testing.T) {
			if c, ok := CourtByCode(code); ok {
				t.Fatalf("CourtByCode(%q) = %+v, want none", code, c)
			}
		})
	}
}

func TestCourtByRA(t *testing.T) {
	tests := []struct{ ra, code string }{
		{"RA000304", "D2601V"}, {"RA000217", "F1103R"}, {"RA000242", "M1201"},
		{"RA000314", "P3210"}, {"RA000259", "K1101R"}, {"RA000351", "B8534"},
		{"RA000243", "B1204"}, {"RA000348", "W1215"}, {"RA000280", "R3306"},
		{"RA000241", "G1207"}, {"RA000329", "Y1210"}, {"RA000277", "X1517R"},
	}
	for _, tt := range tests {
		t.Run(tt.ra, func(t *testing.T) {
			c, ok := CourtByRA(tt.ra)
			if !ok || c.Code != tt.code {
				t.Fatalf("CourtByRA(%q) = %+v, %v; want %s", tt.ra, c, ok, tt.code)
			}
		})
	}
	for _, ra := range []string{"RA000372", "RA999999", "", "RA000198"} {
		t.Run("no court "+ra, func(t *testing.T) {
			if c, ok := CourtByRA(ra); ok {
				t.Fatalf("CourtByRA(%q) = %+v, want none", ra, c)
			}
		})
	}
}

// TestCourtByRAMatchesGLEIFNames checks every local-court RA code of the
// GLEIF list against the court it maps to: the court named in the list
// must carry that RA code.
func TestCourtByRAMatchesGLEIFNames(t *testing.T) {
	n := 0
	for _, r := range readCSV(t, "gleif/ra_list_v1.7_DE.csv") {
		name := r["Local name of organisation responsible for the Register"]
		if !strings.HasPrefix(name, "Amtsgericht ") {
			continue
		}
		ra := r["Registration Authority Code"]
		if _, ok := CourtByRA(ra); !ok {
			t.Errorf("%s (%s) maps to no court", ra, name)
			continue
		}
		byName, ok := lookupAnyCourt(name)
		if !ok || byName.GLEIFRA != ra {
			t.Errorf("%s is %q but that name resolves to %+v", ra, name, byName)
		}
		n++
	}
	if n < 140 {
		t.Fatalf("only %d local courts in the GLEIF list", n)
	}
}

func TestLookupCourt(t *testing.T) {
	tests := []struct{ in, code string }{
		{"München", "D2601V"}, {"Muenchen", "D2601V"}, {"Munchen", "D2601V"}, {"MÜNCHEN", "D2601V"},
		{"Amtsgericht München", "D2601V"}, {"AG München", "D2601V"}, {"AG Muenchen", "D2601V"},
		{"Registergericht München", "D2601V"}, {"Registergericht Amtsgericht München", "D2601V"},
		{"Munich", "D2601V"},
		{"Charlottenburg", "F1103R"}, {"Berlin", "F1103R"}, {"Berlin-Charlottenburg", "F1103R"},
		{"Berlin (Charlottenburg)", "F1103R"}, {"Amtsgericht Charlottenburg", "F1103R"},
		{"Charlottenburg (Berlin)", "F1103R"},
		{"Frankfurt", "M1201"}, {"Frankfurt am Main", "M1201"}, {"Frankfurt/Main", "M1201"},
		{"Frankfurt a. M.", "M1201"}, {"Frankfurt/Oder", "G1207"}, {"Frankfurt (Oder)", "G1207"},
		{"Oldenburg", "P3210"}, {"Oldenburg (Oldenburg)", "P3210"},
		{"Köln", "R3306"}, {"Koeln", "R3306"}, {"Koln", "R3306"}, {"Cologne", "R3306"},
		{"Kempten (Allgäu)", "D2304V"}, {"Kempten", "D2304V"},
		{"Weiden i. d. OPf.", "D3508V"}, {"Weiden i.d. OPf.", "D3508V"}, {"Weiden", "D3508V"},
		{"Freiburg", "B1204"}, {"Freiburg im Breisgau", "B1204"}, {"Freiburg i. Br.", "B1204"},
		{"Kiel", "X1517R"}, {"Lübeck", "X1721R"}, {"Luebeck", "X1721R"}, {"Hamburg", "K1101R"},
		{"Düsseldorf", "R1101"}, {"Duesseldorf", "R1101"}, {"Mönchengladbach", "R1504"},
		{"Gießen", "M1406"}, {"Giessen", "M1406"}, {"Bad Homburg v.d.H.", "M1202"}, {"Bad Homburg", "M1202"},
		{"Ludwigshafen am Rhein", "T3104V"}, {"Ludwigshafen", "T3104V"}, {"St. Ingbert", "V1111"},
		{"Sankt Wendel", "V1112"}, {"Stendal", "W1215"}, {"Jena", "Y1206"}, {"Hof", "D4501V"},
		{"Landau in der Pfalz", "T3304V"}, {"Limburg a. d. Lahn", "M1706"}, {"Nuremberg", "D3310V"},
		{"  amtsgericht   hannover ", "P2305"}, {"Hanover", "P2305"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, ok := LookupCourt(tt.in)
			if !ok || c.Code != tt.code {
				t.Fatalf("LookupCourt(%q) = %+v, %v; want %s", tt.in, c, ok, tt.code)
			}
		})
	}
	// cities without a register court, former courts, other words
	for _, in := range []string{"Teningen", "Varel", "Dessau", "Bremerhaven", "Achern", "Karlsruhe",
		"Amtsgericht", "AG", "GmbH", "", "Müller", "Berlin Mitte", "Frankfurt Oder Main", "Bitterfeld"} {
		t.Run("not a register court "+in, func(t *testing.T) {
			if c, ok := LookupCourt(in); ok {
				t.Fatalf("LookupCourt(%q) = %+v, want none", in, c)
			}
		})
	}
}

// TestCourtNamesResolve checks the table against itself: every court's
// display name leads back to it, and codes are unique.
func TestCourtNamesResolve(t *testing.T) {
	all := allCourts()
	if len(all) < 400 {
		t.Fatalf("only %d courts", len(all))
	}
	current := 0
	for _, c := range all {
		got, ok := lookupAnyCourt(c.Name)
		if !ok || got.Code != c.Code {
			t.Errorf("name %q of %s resolves to %+v", c.Name, c.Code, got)
		}
		if !c.Former {
			current++
			if got, ok := LookupCourt(c.Name); !ok || got.Code != c.Code {
				t.Errorf("LookupCourt(%q) = %+v, want %s", c.Name, got, c.Code)
			}
		}
		if byCode, ok := CourtByCode(c.Code); !ok || byCode != c {
			t.Errorf("CourtByCode(%s) = %+v", c.Code, byCode)
		}
	}
	if current < 138 || current > 200 {
		t.Errorf("%d courts keep registers; expected the 138 of the register dumps and a few more", current)
	}
}

func ExampleLookupCourt() {
	for _, name := range []string{"AG Muenchen", "Berlin-Charlottenburg", "Frankfurt/Main", "Teningen"} {
		c, ok := LookupCourt(name)
		fmt.Printf("%s: %s %q %s %v\n", name, c.Code, c.Name, c.GLEIFRA, ok)
	}
	// Output:
	// AG Muenchen: D2601V "München" RA000304 true
	// Berlin-Charlottenburg: F1103R "Berlin (Charlottenburg)" RA000217 true
	// Frankfurt/Main: M1201 "Frankfurt am Main" RA000242 true
	// Teningen:  ""  false
}

func ExampleCourtByCode() {
	c, _ := CourtByCode("X1517")
	fmt.Println(c.Code, c.Name, c.State)
	// Output: X1517R Kiel Schleswig-Holstein
}

// allCourts returns every court of the table, current and former, in code order.
func allCourts() []Court {
	return append([]Court(nil), courts().courtList...)
}

// lookupAnyCourt is LookupCourt over current and former courts.
func lookupAnyCourt(name string) (Court, bool) {
	return lookupCourtIn(courts().anyCourt, name)
}
