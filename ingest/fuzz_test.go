package ingest

import (
	"bufio"
	"compress/bzip2"
	"encoding/csv"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"companydocs/register"
)

// seedLines adds the first n lines of the real sample to a fuzz corpus
// (more real lines are under testdata/fuzz).
func seedLines(f *testing.F, n int) {
	file, err := os.Open(sampleFile)
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(bzip2.NewReader(file))
	sc.Buffer(nil, 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		f.Add(append([]byte(nil), sc.Bytes()...))
	}
}

func FuzzOffeneRegisterLine(f *testing.F) {
	seedLines(f, 20)
	f.Add([]byte(`{"company_number": "W1215_W1104_HRB573", "name": "x", "all_attributes": {}}`))
	f.Add([]byte(`{"company_number": "", "name": "x", "all_attributes": {"_registerArt": "HRB", "_registerNummer": "1", "registrar": "Kiel", "_registerNummerSuffix": "KI"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p, err := DecodeOffeneRegisterLine(line)
		if err != nil {
			if se := (*SkipError)(nil); !errors.As(err, &se) {
				t.Fatalf("error is not a skip reason: %v", err)
			}
			return
		}
		if p.ID == "" || p.Name == "" || p.Ref.Type == "" || p.Ref.Number == "" {
			t.Fatalf("profile without identity: %+v", p)
		}
		if p.Name != strings.Join(strings.Fields(p.Name), " ") {
			t.Fatalf("name not collapsed: %q", p.Name)
		}
		if utf8.ValidString(p.Name) && p.Verified && p.Ref.Court == "" {
			t.Fatalf("verified without a court: %+v", p.Ref)
		}
	})
}

func FuzzGLEIFCSVRow(f *testing.F) {
	file, err := os.Open(gleifCSVFile(f))
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	lines := bufio.NewScanner(file)
	lines.Scan()
	header := lines.Text()
	for i := 0; i < 20 && lines.Scan(); i++ {
		f.Add(lines.Text())
	}
	f.Add(`529900A2NLSL4WEHU340,"Name, with comma",,,,,,,RA000262,"HRB 1 ""X""",,,,,,,,,,,,,`)
	cols, err := NewGLEIFColumns(strings.Split(header, ","))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, row string) {
		r := csv.NewReader(strings.NewReader(row))
		r.FieldsPerRecord, r.LazyQuotes = -1, true
		fields, err := r.Read()
		if err != nil {
			return
		}
		rec, err := cols.Record(fields)
		if err != nil {
			if se := (*SkipError)(nil); !errors.As(err, &se) {
				t.Fatalf("error is not a skip reason: %v", err)
			}
			return
		}
		if len(rec.LEI) != 20 {
			t.Fatalf("accepted LEI %q", rec.LEI)
		}
		m := gleifMatch{}
		m.court, m.courtOK = register.CourtByRA(rec.RACode)
		m.ref, m.refErr = parseGLEIFRef(rec.RAEntityID)
		p := discoveryProfile(&rec, m)
		if p.Verified && (len(p.Discovery.Missing) > 0 || p.Ref.Number == "") {
			t.Fatalf("verified discovery with missing %v, ref %+v", p.Discovery.Missing, p.Ref)
		}
	})
}
