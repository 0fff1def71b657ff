package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"companydocs/internal/bench"
)

// The kinds of register edits runEdits makes, in turn.
var editKinds = []string{"renamed", "officer replaced", "liquidation", "struck off", "removed", "moved court"}

// runEdits writes a copy of OffeneRegister dumps in which every n-th record
// is edited the way a later dump of the register differs: renamed (the old
// name kept as a previous name), an officer replaced, put into
// liquidation ("i.L."), struck off, gone, or moved to another court (the
// court of an earlier record, the old court kept as former court). The
// ingest of the copy after the original measures the change record with
// real changes.
func runEdits(_ context.Context, args []string) error {
	fs := newFlags("edits")
	every := fs.Int("every", 100, "edit every n-th record")
	offset := fs.Int("offset", 0, "count records from this number: each offset below -every edits other records, so that editing the copy again with the next offset makes the next dump")
	outDir := fs.String("o", "", "directory for the edited copies (NAME.edited.jsonl.gz)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *outDir == "" || fs.NArg() == 0 || *every < 1 || *offset < 0 {
		return fmt.Errorf("need -o DIR, -every >= 1, -offset >= 0 and dump files")
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	e := &editor{every: *every, offset: *offset, counts: map[string]int{}}
	for _, path := range fs.Args() {
		if err := e.editFile(path, *outDir); err != nil {
			return err
		}
	}
	fmt.Printf("| records | edited | %s |\n|---:|---:|%s\n", strings.Join(editKinds, " | "), strings.Repeat("---:|", len(editKinds)))
	fmt.Printf("| %d | %d |", e.records, e.edited)
	for _, k := range editKinds {
		fmt.Printf(" %d |", e.counts[k])
	}
	fmt.Println()
	return nil
}

type editor struct {
	every, offset   int
	records, edited int
	counts          map[string]int
	courts          []string // court codes seen, first two distinct ones
}

func (e *editor) editFile(path, outDir string) error {
	in, err := bench.OpenDump(path)
	if err != nil {
		return err
	}
	defer in.Close()
	base := filepath.Base(path)
	for _, ext := range []string{".bz2", ".gz", ".jsonl"} {
		base = strings.TrimSuffix(base, ext)
	}
	out, err := os.Create(filepath.Join(outDir, base+".edited.jsonl.gz"))
	if err != nil {
		return err
	}
	defer out.Close()
	zw, _ := gzip.NewWriterLevel(out, gzip.BestSpeed)
	w := bufio.NewWriterSize(zw, 1<<20)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line, keep, err := e.edit(sc.Bytes())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if keep {
			w.Write(line)
			w.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return out.Close()
}

// edit returns the line, edited if it is the n-th, and whether to keep it.
func (e *editor) edit(line []byte) ([]byte, bool, error) {
	e.records++
	number, _, _ := strings.Cut(companyNumberOf(line), "_")
	if number != "" && len(e.courts) < 2 && !slices.Contains(e.courts, number) {
		e.courts = append(e.courts, number)
	}
	n := e.records + e.offset
	if n%e.every != 0 {
		return line, true, nil
	}
	var rec map[string]any
	if err := json.Unmarshal(line, &rec); err != nil {
		return line, true, nil // not a record: left as it is
	}
	kind := editKinds[(n/e.every)%len(editKinds)]
	outcome := e.apply(kind, rec, number)
	if outcome == unchanged {
		return line, true, nil
	}
	e.edited++
	e.counts[kind]++
	if outcome == dropped {
		return nil, false, nil
	}
	out, err := json.Marshal(rec)
	return out, err == nil, err
}

// editOutcome is what an edit did to a record.
type editOutcome int

const (
	unchanged editOutcome = iota // the record does not allow the edit
	changed
	dropped
)

// apply makes the edit of kind to rec, whose court is number.
func (e *editor) apply(kind string, rec map[string]any, number string) editOutcome {
	name, _ := rec["name"].(string)
	switch kind {
	case "renamed":
		rec["previous_names"] = append(asList(rec["previous_names"]), map[string]any{"company_name": name})
		rec["name"] = "Neue " + name
	case "officer replaced":
		officers := asList(rec["officers"])
		if len(officers) == 0 {
			return unchanged
		}
		if o, ok := officers[0].(map[string]any); ok {
			o["name"] = "Harun Yilmaz"
		}
	case "liquidation":
		rec["name"] = name + " i.L."
	case "struck off":
		rec["current_status"] = "removed"
	case "removed":
		return dropped
	case "moved court":
		cn, _ := rec["company_number"].(string)
		court := e.otherCourt(number)
		if court == "" || strings.Count(cn, "_") != 1 {
			return unchanged
		}
		rec["company_number"] = court + "_" + cn
	}
	return changed
}

// otherCourt returns a court code seen before that is not number's court.
func (e *editor) otherCourt(court string) string {
	for _, c := range e.courts {
		if c != court {
			return c
		}
	}
	return ""
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// companyNumberOf finds company_number without decoding the whole line.
func companyNumberOf(line []byte) string {
	const key = `"company_number": "`
	s := string(line)
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = s[i+len(key):]
	j := strings.IndexByte(s, '"')
	if j < 0 {
		return ""
	}
	return s[:j]
}
