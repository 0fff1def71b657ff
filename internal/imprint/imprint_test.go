package imprint

import (
	"math/rand/v2"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
)

func testRecord() *Record {
	return &Record{
		Name:    "Müller Haustechnik GmbH",
		Ref:     register.Ref{Court: "D2601V", Type: register.HRB, Number: "6684"},
		Seat:    "München",
		Address: "Siemensstraße 10, 80331 München",
		Officers: []companydocs.Officer{
			{FirstName: "Anna", LastName: "Berger", Position: "Geschäftsführer"},
			{FirstName: "Manuela Gertrud geborene", LastName: "Jentzsch"},
		},
	}
}

func TestBlock(t *testing.T) {
	r := testRecord()
	for _, layout := range []Layout{AnyLayout, Imprint, LetterFooter, Signature} {
		for _, register := range []bool{true, false} {
			for _, oneLine := range []bool{true, false} {
				rnd := rand.New(rand.NewPCG(1, uint64(layout)))
				q := Block(r, rnd, Options{Layout: layout, Register: register, OneLine: oneLine})
				for _, want := range []string{r.Name, "Siemensstraße 10", "80331 München", "Anna Berger"} {
					if !strings.Contains(q, want) {
						t.Errorf("layout %d register %v one line %v: %q lacks %q", layout, register, oneLine, q, want)
					}
				}
				if got := strings.Contains(q, "HRB 6684"); got != register {
					t.Errorf("layout %d register %v: register line present %v in %q", layout, register, got, q)
				}
				if got := strings.Contains(q, "\n"); got == oneLine {
					t.Errorf("layout %d one line %v: line breaks %v in %q", layout, oneLine, got, q)
				}
				if strings.Contains(q, "Jentzsch") {
					t.Errorf("a name with \"geborene\" is no person line: %q", q)
				}
			}
		}
	}
}

func TestBlockDeterministic(t *testing.T) {
	a := Block(testRecord(), rand.New(rand.NewPCG(7, 7)), Options{Register: true})
	b := Block(testRecord(), rand.New(rand.NewPCG(7, 7)), Options{Register: true})
	if a != b {
		t.Errorf("same seed, different blocks:\n%s\n---\n%s", a, b)
	}
}

func TestUsable(t *testing.T) {
	r := testRecord()
	if !Usable(r) {
		t.Errorf("Usable(%+v) = false", r)
	}
	r.Address = "Oststr."
	if Usable(r) {
		t.Errorf("Usable with address %q = true", r.Address)
	}
}
