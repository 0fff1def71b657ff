package register

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"testing"
)

// realLEIs reads the LEI column of the GLEIF golden-copy sample.
func realLEIs(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(realFile(tb, "gleif/lei_records_de_goldencopy.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "LEI" {
			col = i
		}
	}
	if col < 0 {
		tb.Fatal("golden copy has no LEI column")
	}
	var leis []string
	for _, row := range rows[1:] {
		leis = append(leis, row[col])
	}
	return leis
}

func TestParseLEI(t *testing.T) {
	tests := []struct {
		name, in string
		want     LEI
		err      error
	}{
		{"canonical", "529900HNOAA1KXQJUQ27", "529900HNOAA1KXQJUQ27", nil},
		{"lower case", "529900hnoaa1kxqjuq27", "529900HNOAA1KXQJUQ27", nil},
		{"spaces in groups of four", "5299 00HN OAA1 KXQJ UQ27", "529900HNOAA1KXQJUQ27", nil},
		{"hyphens", "5299-00HN-OAA1-KXQJ-UQ27", "529900HNOAA1KXQJUQ27", nil},
		{"surrounding white space", "  213800QILIUD4ROSUO03\t", "213800QILIUD4ROSUO03", nil},
		{"check digits swapped", "529900HNOAA1KXQJUQ72", "", ErrLEIChecksum},
		{"one letter changed", "529900HNOAA1KXQJUR27", "", ErrLEIChecksum},
		{"too short", "529900HNOAA1KXQJUQ2", "", ErrLEIFormat},
		{"too long", "529900HNOAA1KXQJUQ277", "", ErrLEIFormat},
		{"letters in check digits", "529900HNOAA1KXQJUQAB", "", ErrLEIFormat},
		{"punctuation", "529900HNOAA1KXQJ.Q27", "", ErrLEIFormat},
		{"umlaut", "529900HNOAA1KXQJÜQ27", "", ErrLEIFormat},
		{"empty", "", "", ErrLEIFormat},
		{"register number", "HRB 6684", "", ErrLEIFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLEI(tt.in)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("ParseLEI(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestParseLEIRealRecords(t *testing.T) {
	leis := realLEIs(t)
	if len(leis) < 200 {
		t.Fatalf("only %d LEIs in the golden copy sample", len(leis))
	}
	for _, s := range leis {
		got, err := ParseLEI(s)
		if err != nil || string(got) != s {
			t.Errorf("real LEI %q: got %q, %v", s, got, err)
		}
	}
}

// TestParseLEIMutations changes one character of every real LEI and swaps
// adjacent digits: mod 97-10 catches every such error. (Swapping a letter
// with its neighbour is not always caught, since a letter counts as two
// digits.)
func TestParseLEIMutations(t *testing.T) {
	for _, s := range realLEIs(t) {
		for pos := 0; pos < len(s); pos++ {
			b := []byte(s)
			if isDigit(b[pos]) {
				b[pos] = '0' + (b[pos]-'0'+1)%10
			} else {
				b[pos] = 'A' + (b[pos]-'A'+1)%26
			}
			if _, err := ParseLEI(string(b)); !errors.Is(err, ErrLEIChecksum) {
				t.Fatalf("mutated %q -> %q: err %v, want ErrLEIChecksum", s, b, err)
			}
			if pos+1 < len(s) && s[pos] != s[pos+1] && isDigit(s[pos]) && isDigit(s[pos+1]) {
				b = []byte(s)
				b[pos], b[pos+1] = b[pos+1], b[pos]
				if _, err := ParseLEI(string(b)); !errors.Is(err, ErrLEIChecksum) {
					t.Fatalf("transposed %q -> %q: err %v, want ErrLEIChecksum", s, b, err)
				}
			}
		}
	}
}

func TestLooksLikeLEI(t *testing.T) {
	tests := []struct {
		name, in string
		want     bool
	}{
		{"valid", "529900HNOAA1KXQJUQ27", true},
		{"bad checksum still looks like one", "529900HNOAA1KXQJUQ72", true},
		{"grouped", "5299 00HN OAA1 KXQJ UQ27", true},
		{"twenty letters is a word", "Donaudampfschifffahr", false},
		{"register reference", "HRB 6684", false},
		{"nineteen characters", "529900HNOAA1KXQJUQ2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LooksLikeLEI(tt.in); got != tt.want {
				t.Fatalf("LooksLikeLEI(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func ExampleParseLEI() {
	lei, err := ParseLEI("5299 00hn oaa1 kxqj uq27")
	fmt.Println(lei, err)
	_, err = ParseLEI("529900HNOAA1KXQJUQ72")
	fmt.Println(err)
	// Output:
	// 529900HNOAA1KXQJUQ27 <nil>
	// LEI checksum (ISO 7064 mod 97-10) fails
}

func FuzzParseLEI(f *testing.F) {
	for _, s := range []string{"529900HNOAA1KXQJUQ27", "213800QILIUD4ROSUO03", "5299-00hn-oaa1-kxqj-uq27", "529900HNOAA1KXQJUQ72", "HRB 6684", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lei, err := ParseLEI(s)
		if err != nil {
			if lei != "" {
				t.Fatalf("error %v with non-empty result %q", err, lei)
			}
			if errors.Is(err, ErrLEIChecksum) != LooksLikeLEI(s) {
				t.Fatalf("%q: checksum error %v but LooksLikeLEI %v", s, err, LooksLikeLEI(s))
			}
			return
		}
		if len(lei) != leiLength || leiMod97(string(lei)) != 1 {
			t.Fatalf("%q parsed to invalid %q", s, lei)
		}
		if again, err := ParseLEI(string(lei)); err != nil || again != lei {
			t.Fatalf("canonical %q does not parse to itself: %q, %v", lei, again, err)
		}
	})
}
