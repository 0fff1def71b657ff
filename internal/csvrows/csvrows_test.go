package csvrows

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
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
// before Reader; ok is false if encoding/csv gave an error.
func readEncodingCSV(input string, comma byte) (rows []csvRow, ok bool) {
	cr := csv.NewReader(strings.NewReader(input))
	cr.FieldsPerRecord, cr.LazyQuotes, cr.Comma = -1, true, rune(comma)
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

// readCSVRows reads input with Reader through a buffer of bufSize bytes
// (16 is bufio's smallest, so records and line ends straddle chunks).
func readCSVRows(t *testing.T, input string, bufSize, max int, comma byte) (rows []csvRow, tooLong []int) {
	t.Helper()
	r := New(bufio.NewReaderSize(strings.NewReader(input), bufSize), Options{MaxRow: max, Comma: comma})
	for {
		rec, err := r.Read()
		switch {
		case err == io.EOF:
			return rows, tooLong
		case errors.Is(err, ErrRowTooLong):
			tooLong = append(tooLong, r.Start())
		case err != nil:
			t.Fatal(err)
		default:
			rows = append(rows, csvRow{r.Start(), append([]string(nil), rec...)})
		}
	}
}

// checkSameAsEncodingCSV compares the readers on input as it is, and
// with its commas made semicolons and tabs, read with those delimiters.
func checkSameAsEncodingCSV(t *testing.T, input string) {
	t.Helper()
	for _, comma := range []byte{',', ';', '\t'} {
		in := strings.ReplaceAll(input, ",", string(comma))
		want, ok := readEncodingCSV(in, comma)
		if !ok {
			continue
		}
		for _, bufSize := range []int{16, 4096} {
			got, tooLong := readCSVRows(t, in, bufSize, len(in)+1, comma)
			if len(tooLong) > 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("input %q (buffer %d):\nReader       %+v\nencoding/csv %+v", in, bufSize, got, want)
			}
		}
		checkQuotesOnlyStop(t, in, comma, want)
	}
}

// checkQuotesOnlyStop: with CheckQuotes the reader gives encoding/csv's
// records until it reports a quote left open or text after a closing
// quote, and only then differs.
func checkQuotesOnlyStop(t *testing.T, input string, comma byte, want []csvRow) {
	t.Helper()
	r := New(bufio.NewReaderSize(strings.NewReader(input), 16), Options{Comma: comma, MaxRow: len(input) + 1, MaxField: len(input) + 1, CheckQuotes: true})
	var got []csvRow
	for {
		rec, err := r.Read()
		var open *QuoteError
		var after *TextAfterQuoteError
		stopped := errors.As(err, &open) || errors.As(err, &after)
		if err == io.EOF || stopped {
			if len(got) > len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want[:len(got)])) || (!stopped && len(got) != len(want)) {
				t.Fatalf("input %q with CheckQuotes (%v):\nReader       %+v\nencoding/csv %+v", input, err, got, want)
			}
			return
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, csvRow{r.Start(), append([]string(nil), rec...)})
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

// FuzzCSVRowsMatchEncodingCSV holds Reader to encoding/csv's records and
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
		rows, tooLong := readCSVRows(t, input, bufSize, max, ',')
		want := []csvRow{{1, []string{"h1", "h2"}}, {2, []string{"a", "b"}}, {44, []string{"c", "d"}}, {46, []string{"g", "h"}}}
		if !reflect.DeepEqual(rows, want) || !reflect.DeepEqual(tooLong, []int{3, 45}) {
			t.Errorf("buffer %d: rows %+v, skipped at lines %v; want %+v, skipped at [3 45]", bufSize, rows, tooLong, want)
		}
	}
	r := New(bufio.NewReaderSize(strings.NewReader(input), 16), Options{MaxRow: max})
	for {
		if _, err := r.Read(); err == io.EOF {
			break
		}
		if cap(r.buf) > 2*max {
			t.Fatalf("the reader holds %d bytes of a row, limit %d", cap(r.buf), max)
		}
	}
}

// readAll reads input to its end or its first QuoteError with the caps
// the resolve command uses (scaled down): each record as its start line
// and fields, or its start line and the cap it broke.
func readAll(t *testing.T, input string, opt Options) (got []string, quoteErr *QuoteError) {
	t.Helper()
	for _, bufSize := range []int{16, 4096} {
		r := New(bufio.NewReaderSize(strings.NewReader(input), bufSize), opt)
		var rows []string
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if errors.As(err, &quoteErr) {
				if _, again := r.Read(); again != err {
					t.Fatalf("after a quote error the next read gave %v", again)
				}
				break
			}
			switch {
			case errors.Is(err, ErrRowTooLong), errors.Is(err, ErrFieldTooLong):
				rows = append(rows, fmt.Sprintf("%d: %v", r.Start(), err))
			case err != nil:
				t.Fatal(err)
			default:
				rows = append(rows, fmt.Sprintf("%d: %q", r.Start(), rec))
			}
		}
		if got != nil && !reflect.DeepEqual(rows, got) {
			t.Fatalf("buffer %d: %q; buffer 16: %q", bufSize, rows, got)
		}
		got = rows
	}
	return got, quoteErr
}

// TestFieldCap: a field over MaxField, quoted on its line or not, refuses
// its record alone; multi-line cells under the cap are read as they are.
func TestFieldCap(t *testing.T) {
	opt := Options{Comma: ';', MaxRow: 64, MaxField: 10, CheckQuotes: true}
	input := "a;b\n" + strings.Repeat("x", 11) + ";c\n" + `"` + strings.Repeat("y", 20) + `";d` + "\n" + "\"two\nlines\";e\r\n" + "f;\"g\"\"\"\n"
	got, qe := readAll(t, input, opt)
	want := []string{`1: ["a" "b"]`, "2: " + ErrFieldTooLong.Error(), "3: " + ErrFieldTooLong.Error(), `4: ["two\nlines" "e"]`, `6: ["f" "g\""]`}
	if qe != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, %v; want %q", got, qe, want)
	}
}

// TestQuoteLeftOpen: a quote that is never closed is reported with the
// line it opened on, never read as one cell that swallows the rows after
// it: at the end of the input, at a quote that closes nothing after a
// line break, and past the field cap.
func TestQuoteLeftOpen(t *testing.T) {
	opt := Options{MaxRow: 1 << 10, MaxField: 32, CheckQuotes: true}
	rows := "b,c\n"
	for _, tc := range []struct {
		name, input, how string
	}{
		{"to the end", "h\n\"a,b\n" + rows, "the input ends first"},
		{"a quote closing nothing", "h\nx\n\"a,b\n" + rows + `d,"e",f` + "\n" + rows, "on line 5 a quote inside its cell closes nothing"},
		{"past the cap", "h\n\"a,b\n" + strings.Repeat(rows, 20), "its cell runs over line breaks and past 32 bytes"},
		{"on one line past the cap, then a line break", "h\n\"" + strings.Repeat("z", 40) + "\n" + rows, "its cell runs over line breaks and past 32 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, qe := readAll(t, tc.input, opt)
			line := 2
			if tc.name == "a quote closing nothing" {
				line = 3
			}
			if qe == nil || qe.Line != line || !strings.Contains(qe.Error(), tc.how) {
				t.Errorf("got %v, want the quote of line %d not closed: %s", qe, line, tc.how)
			}
		})
	}
	// Without CheckQuotes the reader is encoding/csv's: the quote takes
	// the rest of the input.
	if got, qe := readAll(t, "h\n\"a\n"+rows, Options{MaxRow: 1 << 10}); qe != nil || len(got) != 2 {
		t.Errorf("without CheckQuotes: %q, %v", got, qe)
	}
}

// TestTextAfterQuote: a quoted cell whose closing quote is followed by
// text and which then reaches its line's end stops the reader with the
// line, the cell and the text (its first 64 bytes, whole characters),
// not as a quote left open; the records before it are read. A cell that
// ends on its line after such text is read as encoding/csv reads it.
func TestTextAfterQuote(t *testing.T) {
	opt := Options{Comma: ';', MaxRow: 1 << 10, MaxField: 256, CheckQuotes: true}
	long := strings.Repeat("ü", 40) // 80 bytes
	for _, tc := range []struct {
		name, input string
		rows        []string // read before the stop
		want        *TextAfterQuoteError
	}{
		{"first cell", "Firma;Ort\n\"Foo GmbH\"x;Berlin\nBar AG;Köln\n", []string{`["Firma" "Ort"]`},
			&TextAfterQuoteError{Line: 2, Cell: 1, Text: "x;Berlin"}},
		{"second cell, CRLF", "a;b;c\r\n1;\"Foo\" GmbH;3\r\n4;5;6\r\n", []string{`["a" "b" "c"]`},
			&TextAfterQuoteError{Line: 2, Cell: 2, Text: " GmbH;3"}},
		{"at the end of the input", "a;b\n\"Foo\"x", []string{`["a" "b"]`},
			&TextAfterQuoteError{Line: 2, Cell: 1, Text: "x"}},
		{"after a cell over two lines", "a;b;c\n1;\"two\nlines\";\"c\"d\n", []string{`["a" "b" "c"]`},
			&TextAfterQuoteError{Line: 3, Cell: 3, Text: "d"}},
		{"a long text, cut", "\"a\"" + long + "\n", nil,
			&TextAfterQuoteError{Line: 1, Cell: 1, Text: long[:64]}},
		{"a long text, cut before a character", "\"a\"x" + long + "\n", nil,
			&TextAfterQuoteError{Line: 1, Cell: 1, Text: "x" + long[:62]}},
		{"a tab", "a\tb\n\"Foo\"x\tBerlin\n", []string{`["a\tb"]`},
			&TextAfterQuoteError{Line: 2, Cell: 1, Text: "x\tBerlin"}},
		{"ends on its line", "\"a \"b\" c\";d\n\"e\"\"\";f\n", []string{`["a \"b\" c" "d"]`, `["e\"" "f"]`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, bufSize := range []int{16, 4096} {
				r := New(bufio.NewReaderSize(strings.NewReader(tc.input), bufSize), opt)
				var rows []string
				var err error
				for {
					var rec []string
					if rec, err = r.Read(); err != nil {
						break
					}
					rows = append(rows, fmt.Sprintf("%q", rec))
				}
				var after *TextAfterQuoteError
				var open *QuoteError
				switch {
				case !reflect.DeepEqual(rows, tc.rows):
					t.Errorf("buffer %d: rows %q, want %q", bufSize, rows, tc.rows)
				case tc.want == nil && err != io.EOF:
					t.Errorf("buffer %d: %v, want the input read to its end", bufSize, err)
				case tc.want != nil && (!errors.As(err, &after) || *after != *tc.want || errors.As(err, &open)):
					t.Errorf("buffer %d: %v, want %v", bufSize, err, tc.want)
				case tc.want != nil:
					if _, again := r.Read(); again != err {
						t.Errorf("buffer %d: the next read gave %v", bufSize, again)
					}
				}
			}
		})
	}
}
