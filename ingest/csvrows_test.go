package ingest

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// csvRow is one record as both readers see it.
type csvRow struct {
	Line   int
	Fields []string
}

// readEncodingCSV reads input with encoding/csv as the ingest configured it
// before csvRows; ok is false if encoding/csv gave an error.
func readEncodingCSV(input string) (rows []csvRow, ok bool) {
	cr := csv.NewReader(strings.NewReader(input))
	cr.FieldsPerRecord, cr.LazyQuotes = -1, true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, true
		} else if err != nil {
			return rows, false
		}
		line, _ := cr.FieldPos(0)
		rows = append(rows, csvRow{line, rec})
	}
}

// readCSVRows reads input with csvRows through a buffer of bufSize bytes
// (16 is bufio's smallest, so records and line ends straddle chunks).
func readCSVRows(t *testing.T, input string, bufSize, max int) (rows []csvRow, tooLong []int) {
	t.Helper()
	r := &csvRows{br: bufio.NewReaderSize(strings.NewReader(input), bufSize), max: max}
	for {
		rec, err := r.Read()
		switch {
		case err == io.EOF:
			return rows, tooLong
		case errors.Is(err, errRowTooLong):
			tooLong = append(tooLong, r.start)
		case err != nil:
			t.Fatal(err)
		default:
			rows = append(rows, csvRow{r.start, append([]string(nil), rec...)})
		}
	}
}

func checkSameAsEncodingCSV(t *testing.T, input string) {
	t.Helper()
	want, ok := readEncodingCSV(input)
	if !ok {
		return
	}
	for _, bufSize := range []int{16, 4096} {
		got, tooLong := readCSVRows(t, input, bufSize, len(input)+1)
		if len(tooLong) > 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q (buffer %d):\ncsvRows      %+v\nencoding/csv %+v", input, bufSize, got, want)
		}
	}
}

var csvSeeds = []string{
	"", "\n", "\r\n", "\r", "a", "a\n", "a\r\n", "a\r", "a,b\nc,d\n", "a,\n,b\n,\n",
	`"a","b"` + "\n", `"a""b",c` + "\n", `"a"b",c` + "\n", `a"b,c` + "\n", `"a` + "\n" + `b",c` + "\n",
	`"a` + "\r\n" + `b"` + "\r\n" + "x\r\n", `"abc"` + "\r", `"abc`, `""`, `"""`, `""""`, `"",""` + "\n",
	"\n\na,b\n\n\nc\n", "\r\n\r\na\r\n", "a\rb,c\r\rd\r\n", `"a"` + "\rx\n", `"a"` + "\r\n", `x,"a` + "\r",
	`"LEI","Entity.LegalName"` + "\n" + `"5299","Müller ""&"" Söhne"` + "\n",
	"a,\"b\nc\"d,e\n\"f\"\"\",g", ",,,\n", "\"\n\n\"\n", "\"a\"\"\n\"\"\"\n",
}

// FuzzCSVRowsMatchEncodingCSV holds csvRows to encoding/csv's records and
// record start lines (with LazyQuotes) for every input under the limit.
func FuzzCSVRowsMatchEncodingCSV(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		checkSameAsEncodingCSV(t, input)
	})
}

// TestCSVRowsMatchEncodingCSVOnRandomInput runs the comparison over random
// inputs of the characters that matter, in every normal test run.
func TestCSVRowsMatchEncodingCSVOnRandomInput(t *testing.T) {
	const alphabet = "ab,\"\n\r ü"
	rng := rand.New(rand.NewPCG(14, 5))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		checkSameAsEncodingCSV(t, b.String())
	}
}

// TestCSVRowsSkipLongRows: a row over the limit, quoted across lines or
// not, is skipped whole and reported with the line it starts on, without
// being held; the rows around it are read as they are.
func TestCSVRowsSkipLongRows(t *testing.T) {
	const max = 64
	long := strings.Repeat(`x,"y""`+"\n", 40) // 280 bytes of a quoted field with commas, quotes and line breaks
	input := "h1,h2\n" +
		"a,b\n" +
		`"` + long + `",z` + "\n" + // rows 3..43
		"c,d\n" +
		strings.Repeat("e", 10*max) + ",f\n" +
		"\"g\",\"h\"\r\n"
	for _, bufSize := range []int{16, 4096} {
		rows, tooLong := readCSVRows(t, input, bufSize, max)
		want := []csvRow{{1, []string{"h1", "h2"}}, {2, []string{"a", "b"}}, {44, []string{"c", "d"}}, {46, []string{"g", "h"}}}
		if !reflect.DeepEqual(rows, want) || !reflect.DeepEqual(tooLong, []int{3, 45}) {
			t.Errorf("buffer %d: rows %+v, skipped at lines %v; want %+v, skipped at [3 45]", bufSize, rows, tooLong, want)
		}
	}
	r := &csvRows{br: bufio.NewReaderSize(strings.NewReader(input), 16), max: max}
	for {
		if _, err := r.Read(); err == io.EOF {
			break
		}
		if cap(r.buf) > 2*max {
			t.Fatalf("the reader holds %d bytes of a row, limit %d", cap(r.buf), max)
		}
	}
}
