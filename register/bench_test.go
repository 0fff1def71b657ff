package register

import "testing"

var benchNames = []string{
	"Nutzfahrzeugtechnik Dufner GmbH",
	"Deutsche Mibos - Gesellschaft mit beschränkter Haftung Minameyer & Co.",
	"Johann Kunz Zimmerei-Holzbau, Fassadenbau GmbH & Co. KG",
	"Musikverein Freiburg-Landwasser e. V.",
}

func BenchmarkSplitLegalForm(b *testing.B) {
	for i := 0; i < b.N; i++ {
		SplitLegalForm(benchNames[i%len(benchNames)])
	}
}

func BenchmarkFindRegisterRef(b *testing.B) {
	texts := []string{"Müller GmbH HRB 6684 München", "Nutzfahrzeugtechnik Dufner GmbH Teningen", "Oldenburg (Oldenburg) früher Varel HRB 53"}
	for i := 0; i < b.N; i++ {
		FindRef(texts[i%len(texts)])
	}
}

func BenchmarkParseCompanyNumber(b *testing.B) {
	for i := 0; i < b.N; i++ {
		ParseCompanyNumber("W1215_W1104_HRB573")
	}
}

func BenchmarkLookupCourt(b *testing.B) {
	for i := 0; i < b.N; i++ {
		LookupCourt("Amtsgericht Frankfurt am Main")
	}
}
