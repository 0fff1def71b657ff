package textfold

import "testing"

var benchNames = []string{
	"Nutzfahrzeugtechnik Dufner GmbH",
	"Deutsche Mibos - Gesellschaft mit beschränkter Haftung Minameyer & Co.",
	"Johann Kunz Zimmerei-Holzbau, Fassadenbau GmbH & Co. KG",
	"Musikverein Freiburg-Landwasser e. V.",
}

func BenchmarkFold(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Fold(benchNames[i%len(benchNames)])
	}
}
