package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"companydocs/app"
	"companydocs/internal/syncbuf"
	"companydocs/sheet"
)

// sheetRecords is how many records of the embedded sample the resolve
// tests index: the rows they resolve are drawn from the same records.
const sheetRecords = 4000

// SampleSheet indexes the first sheetRecords records of the embedded
// sample in a new data directory and returns it with those records.
func SampleSheet(t testing.TB) (string, []Record) {
	t.Helper()
	sample := SampleFile(t)
	dir := t.TempDir()
	MustBuild(t, dir, sheetRecords, sample)
	return dir, ReadRecords(t, sample, sheetRecords)
}

// RegisterClue is a record's register entry as people write it: "Freiburg
// HRB 260632" (court, kind, number and suffix); "" when the record has
// none.
func RegisterClue(r Record) string {
	if number := RegisterNumberOf(r); number != "" && r.Attributes.Registrar != "" {
		return r.Attributes.Registrar + " " + number
	}
	return ""
}

// RegisterNumberOf reads "HRB 260632" from the company number
// "B1204_HRB260632" ("HRA 85 NI" from "..._HRA85NI").
func RegisterNumberOf(r Record) string {
	num := r.CompanyNumber[strings.LastIndex(r.CompanyNumber, "_")+1:]
	digits := strings.IndexFunc(num, func(c rune) bool { return c >= '0' && c <= '9' })
	if digits <= 0 {
		return ""
	}
	after := strings.IndexFunc(num[digits:], func(c rune) bool { return c < '0' || c > '9' })
	if after < 0 {
		return num[:digits] + " " + num[digits:]
	}
	return num[:digits] + " " + num[digits:digits+after] + " " + num[digits+after:]
}

// withTypo swaps two letters in the middle of the name's longest word,
// as a hurried typist does ("Nutzfahrzeugtechnik" -> "Nutzfarhzeugtechnik").
func withTypo(name string) string {
	words := strings.Fields(name)
	longest := 0
	for i, w := range words {
		if utf8.RuneCountInString(w) > utf8.RuneCountInString(words[longest]) {
			longest = i
		}
	}
	r := []rune(words[longest])
	if len(r) < 6 {
		return name
	}
	m := len(r) / 2
	r[m], r[m+1] = r[m+1], r[m]
	words[longest] = string(r)
	return strings.Join(words, " ")
}

// WriteSheet writes rows as a CSV file with the given delimiter, with
// Excel's BOM when bom is set.
func WriteSheet(t testing.TB, path string, comma rune, bom bool, rows [][]string) {
	t.Helper()
	var buf bytes.Buffer
	if bom {
		buf.WriteString(sheet.BOM)
	}
	w := csv.NewWriter(&buf)
	w.Comma = comma
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadSheet parses data as a sheet whose fields are separated by comma.
func ReadSheet(t testing.TB, data []byte, comma rune) [][]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = comma
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("the output is no CSV: %v\n%s", err, data)
	}
	return rows
}

// GermanExcelRows are rows as a German Excel sheet holds them: a name
// column (every third name with a typo), the seat, and every fourth row
// with its register entry, from the records from every step-th one.
func GermanExcelRows(recs []Record, n, step int) [][]string {
	rows := [][]string{{"Firma", "Ort", "Registernummer"}}
	for i := 0; len(rows) <= n; i += step {
		r := recs[i%len(recs)]
		name, register := r.Name, ""
		if i%3 == 1 {
			name = withTypo(name)
		}
		if i%4 == 0 {
			register = RegisterClue(r)
		}
		rows = append(rows, []string{name, r.Attributes.Office, register})
	}
	return rows
}

// CompanydocsCommand runs the companydocs command line as a separate
// process (this test binary, acting as the companydocs binary through
// TestMain).
func CompanydocsCommand(t *testing.T, args ...string) (cmd *exec.Cmd, stdout *bytes.Buffer, stderr *syncbuf.Buffer) {
	t.Helper()
	cmd = exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), RunMainEnv+"=1")
	stdout, stderr = &bytes.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, stdout, stderr
}

// Lines counts the line breaks of a file, 0 when it is missing.
func Lines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// CountingWriter counts the lines written to it.
type CountingWriter struct{ Lines int }

// Write counts the lines of p.
func (w *CountingWriter) Write(p []byte) (int, error) {
	w.Lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// RunCLIOut is RunCLI with stdout going to out.
func RunCLIOut(t *testing.T, out io.Writer, args ...string) (stdout, stderr, line string, code int) {
	t.Helper()
	var errOut bytes.Buffer
	err := app.RunCommand(context.Background(), args, out, &errOut)
	if err == nil {
		return "", errOut.String(), "", 0
	}
	return "", errOut.String(), app.ErrorLine(err), app.ExitCode(err)
}
