package textfold

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestFold(t *testing.T) {
	tests := []struct{ in, want, plain string }{
		{"Müller GmbH", "mueller gmbh", "muller gmbh"},
		{"MÜLLER", "mueller", "muller"},
		{"Mueller", "mueller", "mueller"},
		{"Gießen", "giessen", "giessen"},
		{"Straße", "strasse", "strasse"},
		{"Öl- und Fett-Werke", "oel & fett werke", "ol & fett werke"},
		{"Müller u. Söhne", "mueller & soehne", "muller & sohne"},
		{"Haas + Engler GmbH", "haas & engler gmbh", "haas & engler gmbh"},
		{"A&B", "a & b", "a & b"},
		{"Müller und Partner", "mueller & partner", "muller & partner"},
		{"Kunz Zimmerei-Holzbau, Fassadenbau GmbH & Co. KG", "kunz zimmerei holzbau fassadenbau gmbh & co kg", "kunz zimmerei holzbau fassadenbau gmbh & co kg"},
		{"GmbH u.Co. KG", "gmbh & co kg", "gmbh & co kg"},
		{"Café Crème", "cafe creme", "cafe creme"},
		{"S.à r.l.", "s a r l", "s a r l"},
		{"Øresund Ærø", "oresund aero", "oresund aero"},
		{"Łódź", "lodz", "lodz"},
		{"  lots   of\tspace \n", "lots of space", "lots of space"},
		{"McDonald's", "mcdonalds", "mcdonalds"},
		{"\"Regionaler Wohnungsbau GmbH (REWO)\"", "regionaler wohnungsbau gmbh rewo", "regionaler wohnungsbau gmbh rewo"},
		{"decomposed u\u0308ber", "decomposed ueber", "decomposed uber"},
		{"Bau.", "bau", "bau"},
		{"Rundfunk", "rundfunk", "rundfunk"},
		// abbreviations as lists write them, spelled out
		{"Gebr. Müller GmbH", "gebrueder mueller gmbh", "gebruder muller gmbh"},
		{"Müller Grdst.-Verw.-Ges. mbH", "mueller grundstuecks verwaltung gesellschaft mbh", "muller grundstucks verwaltung gesellschaft mbh"},
		{"Dt. Int. Immob. Beteil. GmbH", "deutsche international immobilien beteiligungs gmbh", "deutsche international immobilien beteiligungs gmbh"},
		{"Schmidt RA-Ges. mbH", "schmidt rechtsanwaltsgesellschaft mbh", "schmidt rechtsanwaltsgesellschaft mbh"},
		{"Müller StBG mbH", "mueller steuerberatungsgesellschaft mbh", "muller steuerberatungsgesellschaft mbh"},
		{"WPG Müller", "wirtschaftspruefungsgesellschaft mueller", "wirtschaftsprufungsgesellschaft muller"},
		// without their dot, the letters may start a word being typed
		{"Verw GmbH", "verw gmbh", "verw gmbh"},
		{"RA Müller, Ra Ges", "ra mueller ra ges", "ra muller ra ges"},
		{"", "", ""},
		{"---", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Fold(tt.in); got != tt.want {
				t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := FoldPlain(tt.in); got != tt.plain {
				t.Errorf("FoldPlain(%q) = %q, want %q", tt.in, got, tt.plain)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	got := Tokens(Fold("Müller-Lüdenscheidt u. Co."))
	want := []string{"mueller", "luedenscheidt", "&", "co"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Tokens = %q, want %q", got, want)
	}
	if got := Tokens(""); len(got) != 0 {
		t.Fatalf("Tokens(\"\") = %q", got)
	}
}

func TestPhonetic(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Wikipedia", "3412"},
		{"Müller-Lüdenscheidt", "65752682"},
		{"Breschnew", "17863"},
		{"Müller", "657"}, {"Mueller", "657"}, {"Muller", "657"},
		{"Meier", "67"}, {"Mayer", "67"}, {"Maier", "67"}, {"Meyer", "67"},
		{"Schmidt", "862"}, {"Schmitt", "862"}, {"Schmid", "862"},
		{"Christoph", "47823"}, {"Xaver", "4837"}, {"Philipp", "351"},
		{"Cäsar", "887"}, {"Zacharias", "8478"},
		{"Heinz", "068"}, {"Otto", "02"}, {"Fischer", "387"}, {"Fuchs", "348"},
		{"", ""}, {"123", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Phonetic(tt.in); got != tt.want {
				t.Fatalf("Phonetic(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func ExampleFold() {
	fmt.Println(Fold("Müller u. Söhne GmbH & Co. KG"))
	fmt.Println(FoldPlain("Müller u. Söhne GmbH & Co. KG"))
	// Output:
	// mueller & soehne gmbh & co kg
	// muller & sohne gmbh & co kg
}

func ExamplePhonetic() {
	fmt.Println(Phonetic("Meier"), Phonetic("Mayer"), Phonetic("Schmidt"), Phonetic("Schmitt"))
	// Output: 67 67 862 862
}

// nameSeeds are real names from the register dumps.
var nameSeeds = []string{
	"Nutzfahrzeugtechnik Dufner GmbH", "Haas + Engler GmbH", "Deutsche Mibos - Gesellschaft mit beschränkter Haftung Minameyer & Co.",
	"Optimum Pet Care, Inh. Ulrich Palm e.Kfm.", "Musikverein Freiburg-Landwasser e. V.", "Hoteltouristik Ltd. & Co KG",
	"SCI Beteiligungs UG (haftungsbeschränkt)", "Wilhelm Zeh K.G.", "Regionaler Wohnungsbau GmbH (REWO)", "Øresund ß ẞ İ",
	"u. u.u. und+&", "McDonald's", "decomposed u\u0308ber",
}

func FuzzFold(f *testing.F) {
	for _, s := range nameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, fold := range []func(string) string{Fold, FoldPlain} {
			once := fold(s)
			if twice := fold(once); twice != once {
				t.Fatalf("not idempotent: %q -> %q -> %q", s, once, twice)
			}
			if utf8.ValidString(s) && !utf8.ValidString(once) {
				t.Fatalf("%q folds to invalid UTF-8 %q", s, once)
			}
			if strings.Contains(once, "  ") || strings.TrimSpace(once) != once {
				t.Fatalf("%q folds to %q with stray spaces", s, once)
			}
			if strings.ToLower(once) != once {
				t.Fatalf("%q folds to %q which is not lower case", s, once)
			}
			if utf8.ValidString(s) && fold(norm.NFD.String(s)) != once {
				t.Fatalf("%q folds to %q, decomposed to %q", s, once, fold(norm.NFD.String(s)))
			}
		}
	})
}

// The table fold decomposes Latin letters with must give what norm gives:
// a decomposed string always takes the norm path.
func TestFoldLatinTableAgreesWithNorm(t *testing.T) {
	for r := rune(0x80); r <= 0x17F; r++ {
		for _, s := range []string{string(r), "Mü" + string(r) + "ller", string(r) + "\u0308", "u" + string(r) + "\u0301\u0323"} {
			for _, fold := range []func(string) string{Fold, FoldPlain} {
				if got, want := fold(s), fold(norm.NFD.String(s)); got != want {
					t.Errorf("%q folds to %q, decomposed to %q", s, got, want)
				}
			}
		}
	}
}
