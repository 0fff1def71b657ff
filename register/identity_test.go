package register

import "testing"

// The entries below are real company numbers of the OffeneRegister dump
// (shared/data/offeneregister): Oldenburg keeps three entries HRB 53, one
// of its own and one each from the merged former courts Varel and
// Westerstede; Stendal three HRB 573 (its own, formerly Dessau, formerly
// Halle); Kiel five HRA 59 told apart by suffix.

func mustCompanyNumber(tb testing.TB, s string) Ref {
	tb.Helper()
	r, err := ParseCompanyNumber(s)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func mustRef(tb testing.TB, s string) Ref {
	tb.Helper()
	r, err := ParseRef(s)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func TestReferenceNamesEntry(t *testing.T) {
	tests := []struct {
		query, entry string
		want         bool
	}{
		{"Berlin (Charlottenburg) HRB 1588", "F1103R_HRB1588", true},
		{"HRB 1588 B", "F1103R_HRB1588", true},
		{"Amtsgericht Charlottenburg HRB 1588 B", "F1103R_HRB1588", true},
		{"HRB 1588 B", "D2601V_HRB1588", false},
		{"HRB 1588", "D2601V_HRB1588", true},
		{"Kiel HRA 59 KI", "X1517R_HRA59KI", true},
		{"Kiel HRA 59 KI", "X1517R_HRA59RD", false},
		{"Kiel HRA 59", "X1517R_HRA59NM", false},
		{"Kiel HRB 53 EC", "X1517R_HRB53EC", true},
		{"Oldenburg (Oldenburg) HRB 53", "P3210_HRB53", true},
		{"Oldenburg (Oldenburg) HRB 53", "P3210_P3211_HRB53", true},
		{"Oldenburg (Oldenburg) früher Varel HRB 53", "P3210_P3211_HRB53", true},
		{"Oldenburg (Oldenburg) früher Varel HRB 53", "P3210_P3215_HRB53", false},
		{"Oldenburg (Oldenburg) früher Varel HRB 53", "P3210_HRB53", false},
		{"Stendal früher Dessau HRB 573", "W1215_W1104_HRB573", true},
		{"Stendal früher Dessau HRB 573", "W1215_W1109_HRB573", false},
		{"Stendal früher Bitterfeld VR 53", "W1215_W1103_VR53", true},
		{"Stendal früher Bitterfeld VR 53", "W1215_W1103_VR59", false},
		{"Stendal HRB 573", "W1215_HRB573", true},
		{"München HRB 573", "W1215_HRB573", false},
		{"Stendal HRA 573", "W1215_HRB573", false},
	}
	for _, tt := range tests {
		t.Run(tt.query+" names "+tt.entry, func(t *testing.T) {
			q, e := mustRef(t, tt.query), mustCompanyNumber(t, tt.entry)
			if got := q.Names(e); got != tt.want {
				t.Errorf("%+v Names %+v = %v, want %v", q, e, got, tt.want)
			}
		})
	}
}

func TestSameEntry(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"X1517R_HRA59KI", "X1517R_HRA59KI", true},
		{"X1517_HRA59KI", "X1517R_HRA59KI", true}, // the code without its register letter
		{"X1517R_HRA59KI", "X1517R_HRA59RD", false},
		{"X1517R_HRA59KI", "X1517R_HRA59", false},
		{"P3210_P3211_HRB53", "P3210_HRB53", false},
		{"P3210_P3211_HRB53", "P3210_P3215_HRB53", false},
		{"W1215_W1104_HRB573", "W1215_W1104_HRB573", true},
		{"W1215_W1104_HRB573", "W1215_W1109_HRB573", false},
		{"F1103R_HRB1588", "F1103_HRB1588", true},
		{"F1103R_HRB1588", "D2601V_HRB1588", false},
	}
	for _, tt := range tests {
		a, b := mustCompanyNumber(t, tt.a), mustCompanyNumber(t, tt.b)
		if got := a.SameEntry(b); got != tt.want {
			t.Errorf("%s SameEntry %s = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := b.SameEntry(a); got != tt.want {
			t.Errorf("%s SameEntry %s = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestSuffixesAgree(t *testing.T) {
	tests := []struct {
		court, a, b string
		want        bool
	}{
		{"X1517R", "KI", "KI", true},
		{"X1517R", "KI", "RD", false},
		{"X1517R", "ki", "KI", true},
		{"X1517R", "", "KI", false},
		{"X1112R", "FL", "FL", true}, // Flensburg
		{"X1721R", "", "", true},     // Lübeck
		{"F1103R", "B", "", true},    // Charlottenburg's marker, dropped by the dumps
		{"H1101", "HB", "", true},    // Bremen's
		{"D2601V", "", "", true},
		{"Q9999", "A", "", false}, // an unknown court: a suffix is never ignored
	}
	for _, tt := range tests {
		if got := SuffixesAgree(tt.court, tt.a, tt.b); got != tt.want {
			t.Errorf("SuffixesAgree(%q, %q, %q) = %v, want %v", tt.court, tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSameCourt(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"D2601", "D2601V", true},
		{"d2601v", "D2601V", true},
		{"X1517", "X1517R", true},
		{"P3210", "P3211", false}, // Oldenburg and its former court Varel
		{"W1215", "W1103", false}, // Stendal and Bitterfeld
		{"", "", true},
		{"", "D2601V", false},
	}
	for _, tt := range tests {
		if got := SameCourt(tt.a, tt.b); got != tt.want {
			t.Errorf("SameCourt(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCourtOfMarker(t *testing.T) {
	for suffix, want := range map[string]string{"B": "F1103R", "hb": "H1101", "FF": "G1207"} {
		if got, ok := CourtOfMarker(suffix); !ok || got != want {
			t.Errorf("CourtOfMarker(%q) = %q, %v; want %q", suffix, got, ok, want)
		}
	}
	for _, suffix := range []string{"KI", "RD", "", "X"} {
		if got, ok := CourtOfMarker(suffix); ok {
			t.Errorf("CourtOfMarker(%q) = %q, want none", suffix, got)
		}
	}
}
