package resolver

import (
	"slices"
	"strings"
	"testing"
)

// TestReadClues checks how the kinds of clue are read: the LEI with a
// label, noise words, a person's name, an address, a seat typed without
// its umlaut, and a register reference whose letters and digits happen
// to pass the LEI checksum.
func TestReadClues(t *testing.T) {
	for _, tc := range []struct {
		query   string
		lei     string
		ref     bool
		clean   string
		ignored string
		person  string
		address bool
	}{
		{query: "LEI: 213800QILIUD4ROSUO03", lei: "213800QILIUD4ROSUO03"},
		{query: "LEI 213800QILIUD4ROSUO03", lei: "213800QILIUD4ROSUO03"},
		{query: "lei-code 2138 00QI LIUD 4ROS UO03", lei: "213800QILIUD4ROSUO03"},
		{query: "Kaiserslautern VR 1514", lei: "KAISERSLAUTERNVR1514", ref: true},
		{query: "Firma Nutzfahrzeugtechnik Dufner GmbH aus Teningen", clean: "nutzfahrzeugtechnik dufner teningen", ignored: "firma aus"},
		{query: "Registerauszug Die Firma Müller Bau mit Sitz in Köln", clean: "mueller bau koeln", ignored: "registerauszug die firma mit sitz in"},
		{query: "Verein der Freunde des Theaters", clean: "verein der freunde des theaters"},
		{query: "Hendrik Beier", clean: "hendrik beier", person: "hendrik beier"},
		{query: "Hans-Joachim Reuker", clean: "hans joachim reuker", person: "hans joachim reuker"},
		{query: "Elmar Böhme Hannover", clean: "elmar boehme hannover", person: "elmar boehme"},
		{query: "Peter Schmieder GmbH", clean: "peter schmieder"},
		{query: "Peter Wolf", clean: "peter wolf", person: "peter wolf"},
		{query: "Müller & Müller", clean: "mueller mueller"},
		{query: "Lilli-Zapf-Straße 2 Tübingen", clean: "lilli zapf strasse 2 tuebingen", address: true},
		{query: "Klostergarten 30, 79341 Kenzingen", clean: "klostergarten 30 79341 kenzingen", address: true},
		{query: "Objekt 2 GmbH", clean: "objekt 2"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			pq := parseQuery(tc.query)
			if got := string(pq.lei); got != tc.lei {
				t.Errorf("LEI %q, want %q", got, tc.lei)
			}
			if pq.hasRef != tc.ref {
				t.Errorf("register reference %v, want %v", pq.hasRef, tc.ref)
			}
			if tc.lei != "" && !tc.ref {
				return
			}
			if tc.ref {
				pq.readAsRegister()
				if pq.leiShape {
					t.Error("still read as an LEI")
				}
				return
			}
			if got := strings.Join(pq.clean, " "); got != tc.clean {
				t.Errorf("clean %q, want %q", got, tc.clean)
			}
			if got := strings.Join(pq.asideWords(), " "); got != tc.ignored {
				t.Errorf("ignored %q, want %q", got, tc.ignored)
			}
			if got := strings.Join(pq.person, " "); got != tc.person {
				t.Errorf("person %q, want %q", got, tc.person)
			}
			if pq.address != tc.address {
				t.Errorf("address %v, want %v", pq.address, tc.address)
			}
		})
	}
}

func TestPlaceSpellings(t *testing.T) {
	got := placeSpellings([]string{"mueller", "koln", "dusseldorf", "munchen", "berlin"})
	for _, want := range []string{"koeln", "duesseldorf", "muenchen"} {
		if !slices.Contains(got, want) {
			t.Errorf("placeSpellings gives %v, want %s among them", got, want)
		}
	}
}

func TestSplitSeatWithoutUmlaut(t *testing.T) {
	r := newReading([]string{"mueller", "bau", "koln"})
	rest, ok := splitSeat(r.tokens, r.plain, newSeatForms("Köln"))
	if !ok || strings.Join(rest, " ") != "mueller bau" {
		t.Errorf("splitSeat = %v, %v; want [mueller bau], true", rest, ok)
	}
}
