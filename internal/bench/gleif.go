package bench

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"companydocs/ingest"
	"companydocs/register"
)

// ReadGLEIF reads GLEIF records from golden-copy CSV files (.csv) and API
// JSONL files (anything else); rows that do not parse are skipped.
func ReadGLEIF(paths []string) ([]ingest.GLEIFRecord, error) {
	var out []ingest.GLEIFRecord
	for _, p := range paths {
		var recs []ingest.GLEIFRecord
		var err error
		if strings.HasSuffix(p, ".csv") {
			recs, err = readGLEIFCSV(p)
		} else {
			recs, err = readGLEIFJSON(p)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

func readGLEIFCSV(path string) ([]ingest.GLEIFRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open GLEIF file: %w", err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read GLEIF header %q: %w", path, err)
	}
	cols, err := ingest.NewGLEIFColumns(header)
	if err != nil {
		return nil, err
	}
	var out []ingest.GLEIFRecord
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			continue
		}
		if r, err := cols.Record(row); err == nil {
			out = append(out, r)
		}
	}
}

func readGLEIFJSON(path string) ([]ingest.GLEIFRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open GLEIF file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), maxLine)
	var out []ingest.GLEIFRecord
	for sc.Scan() {
		if r, err := ingest.DecodeGLEIFJSONLine(sc.Bytes()); err == nil {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// gleifKey is where a GLEIF record points in the register: court key,
// type and number ("D2601|HRB|6684"), or "" when it names no German court
// entry.
func gleifKey(r *ingest.GLEIFRecord) string {
	court, ok := register.CourtByRA(r.RACode)
	if !ok {
		return ""
	}
	ref, err := register.ParseRef(r.RAEntityID)
	if err != nil {
		return ""
	}
	return registerKey(court.Code, ref.Type, ref.Number)
}

// registerKey ignores the trailing register letter of a court code
// ("D2601V" and "D2601" are one court) as the ingest's linking does.
func registerKey(court string, t register.Type, number string) string {
	if c, ok := register.CourtByCode(court); ok {
		court = c.Code
	}
	if n := len(court); n >= 6 && court[n-1] >= 'A' && court[n-1] <= 'Z' {
		court = court[:n-1]
	}
	return court + "|" + string(t) + "|" + number
}
