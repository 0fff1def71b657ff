package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"companydocs/register"
)

// Model holds the real distributions a synthetic corpus is drawn from:
// register slots (court, former court, type, suffix with their registrar
// names and federal state), seats per registrar, legal-form spellings and
// name vocabularies per register type, officer names and positions,
// document holdings per status, and how often optional fields occur.
type Model struct {
	Slots     *Weighted[string]            // encoded slot, see slot
	Seats     map[string]*Weighted[string] // registrar -> seat
	AllSeats  *Weighted[string]
	Forms     map[string]*Weighted[string] // register type -> legal-form spelling ("" for none)
	Vocab     map[string]*Weighted[string] // register type -> name token
	NameLen   map[string]*Weighted[int]    // register type -> base tokens per name
	Officers  map[string]*Weighted[int]    // register type -> officers per record
	Positions map[string]*Weighted[string] // register type -> officer position
	First     *Weighted[string]
	Last      *Weighted[string]
	Docs      map[bool]*Weighted[string] // live -> additional_data pattern
	Retrieved *Weighted[string]
	// Rates per 1,000 records (or officers) of optional fields.
	PrevPerMille, AddrPerMille, DismissedPerMille int
	// MaxNumber is the largest register number of the real records:
	// synthetic numbers start above it, so company numbers never collide.
	MaxNumber int
	// Records is how many real records the model was learned from.
	Records int
}

// docKeys is the order of the document flags in a pattern string.
var docKeys = []string{"AD", "CD", "DK", "HD", "SI", "UT", "VÖ"}

// tally counts the features of real records; one per scanning worker.
type tally struct {
	slots, allSeats, retrieved          map[string]int
	seats, forms, vocab, positions      map[string]map[string]int
	nameLen, officers                   map[string]map[int]int
	docs                                map[bool]map[string]int
	prev, addr, dismissed, officerTotal int
	records, maxNumber                  int
}

func newTally() *tally {
	return &tally{
		slots: map[string]int{}, allSeats: map[string]int{}, retrieved: map[string]int{},
		positions: map[string]map[string]int{}, seats: map[string]map[string]int{}, forms: map[string]map[string]int{}, vocab: map[string]map[string]int{},
		nameLen: map[string]map[int]int{}, officers: map[string]map[int]int{},
		docs: map[bool]map[string]int{true: {}, false: {}},
	}
}

func inc[K comparable](m map[string]map[K]int, outer string, k K, n int) {
	in := m[outer]
	if in == nil {
		in = map[K]int{}
		m[outer] = in
	}
	in[k] += n
}

// add counts one real record.
func (t *tally) add(r *Record) {
	a := &r.AllAttributes
	typ := a.RegisterArt
	prefix, ok := companyPrefix(r.CompanyNumber)
	if !ok || typ == "" {
		return
	}
	t.records++
	t.slots[slot{prefix, typ, a.RegisterNummerSuffix, a.Registrar, a.FormerRegistrar, a.FederalState}.encode()]++
	if a.RegisteredOffice != "" {
		inc(t.seats, a.Registrar, a.RegisteredOffice, 1)
		t.allSeats[a.RegisteredOffice]++
	}
	base, form := SplitRawName(r.Name)
	inc(t.forms, typ, form, 1)
	inc(t.nameLen, typ, min(len(base), 12), 1)
	for _, tok := range base {
		inc(t.vocab, typ, tok, 1)
	}
	inc(t.officers, typ, min(len(r.Officers), 12), 1)
	for _, o := range r.Officers {
		t.officerTotal++
		if o.Position != "" {
			inc(t.positions, typ, o.Position, 1)
		}
		if o.OtherAttributes.Dismissed {
			t.dismissed++
		}
	}
	t.docs[r.IsLive()][docPattern(a.AdditionalData)]++
	if len(r.PreviousNames) > 0 {
		t.prev++
	}
	if r.RegisteredAddress != "" {
		t.addr++
	}
	if r.RetrievedAt != "" {
		t.retrieved[r.RetrievedAt]++
	}
	if n, err := strconv.Atoi(a.RegisterNummer); err == nil {
		t.maxNumber = max(t.maxNumber, n)
	}
}

// merge adds the counts of o into t.
func (t *tally) merge(o *tally) {
	for _, p := range []struct{ dst, src map[string]int }{{t.slots, o.slots}, {t.allSeats, o.allSeats}, {t.retrieved, o.retrieved}} {
		for k, n := range p.src {
			p.dst[k] += n
		}
	}
	for _, p := range []struct{ dst, src map[string]map[string]int }{{t.seats, o.seats}, {t.forms, o.forms}, {t.vocab, o.vocab}, {t.positions, o.positions}} {
		for outer, m := range p.src {
			for k, n := range m {
				inc(p.dst, outer, k, n)
			}
		}
	}
	for _, p := range []struct{ dst, src map[string]map[int]int }{{t.nameLen, o.nameLen}, {t.officers, o.officers}} {
		for outer, m := range p.src {
			for k, n := range m {
				inc(p.dst, outer, k, n)
			}
		}
	}
	for live, m := range o.docs {
		for k, n := range m {
			t.docs[live][k] += n
		}
	}
	t.prev += o.prev
	t.addr += o.addr
	t.dismissed += o.dismissed
	t.officerTotal += o.officerTotal
	t.records += o.records
	t.maxNumber = max(t.maxNumber, o.maxNumber)
}

// LearnModel reads the real dump files and the officer name frequency
// files in namesDir (offeneregister_officer_{firstnames,lastnames}_freq.csv).
func LearnModel(paths []string, namesDir string, workers int) (*Model, error) {
	tallies := make([]*tally, max(1, workers))
	for i := range tallies {
		tallies[i] = newTally()
	}
	if err := ScanRecords(paths, workers, func(w int, r *Record) { tallies[w].add(r) }); err != nil {
		return nil, err
	}
	t := tallies[0]
	for _, o := range tallies[1:] {
		t.merge(o)
	}
	if t.records == 0 {
		return nil, fmt.Errorf("learn model: no record in %d files", len(paths))
	}
	m := t.model()
	var err error
	if m.First, err = readFreqCSV(filepath.Join(namesDir, "offeneregister_officer_firstnames_freq.csv")); err != nil {
		return nil, err
	}
	if m.Last, err = readFreqCSV(filepath.Join(namesDir, "offeneregister_officer_lastnames_freq.csv")); err != nil {
		return nil, err
	}
	return m, nil
}

func (t *tally) model() *Model {
	m := &Model{
		Slots: NewWeighted(t.slots), AllSeats: NewWeighted(t.allSeats), Positions: map[string]*Weighted[string]{},
		Retrieved: NewWeighted(t.retrieved),
		Seats:     map[string]*Weighted[string]{}, Forms: map[string]*Weighted[string]{}, Vocab: map[string]*Weighted[string]{},
		NameLen: map[string]*Weighted[int]{}, Officers: map[string]*Weighted[int]{},
		Docs:         map[bool]*Weighted[string]{true: NewWeighted(t.docs[true]), false: NewWeighted(t.docs[false])},
		PrevPerMille: perMille(t.prev, t.records), AddrPerMille: perMille(t.addr, t.records),
		DismissedPerMille: perMille(t.dismissed, t.officerTotal),
		MaxNumber:         t.maxNumber, Records: t.records,
	}
	for k, c := range t.seats {
		m.Seats[k] = NewWeighted(c)
	}
	for k, c := range t.positions {
		m.Positions[k] = NewWeighted(c)
	}
	for k, c := range t.forms {
		m.Forms[k] = NewWeighted(c)
	}
	for k, c := range t.vocab {
		m.Vocab[k] = NewWeighted(c)
	}
	for k, c := range t.nameLen {
		m.NameLen[k] = NewWeighted(c)
	}
	for k, c := range t.officers {
		m.Officers[k] = NewWeighted(c)
	}
	return m
}

func perMille(n, of int) int {
	if of == 0 {
		return 0
	}
	return n * 1000 / of
}

// readFreqCSV reads a "value,count" file with a header line.
func readFreqCSV(path string) (*Weighted[string], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open frequency file: %w", err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	counts := map[string]int{}
	for line := 0; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", path, err)
		}
		if line == 0 || len(row) < 2 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(row[1]))
		if err == nil && strings.TrimSpace(row[0]) != "" {
			counts[strings.TrimSpace(row[0])] += n
		}
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("read %q: no value", path)
	}
	return NewWeighted(counts), nil
}

// docPattern encodes the document flags as a string of 0 and 1 in docKeys
// order.
func docPattern(d map[string]bool) string {
	b := make([]byte, len(docKeys))
	for i, k := range docKeys {
		b[i] = '0'
		if d[k] {
			b[i] = '1'
		}
	}
	return string(b)
}

// companyPrefix returns the court codes of a company number:
// "R2809_R2807" of "R2809_R2807_HRA53".
func companyPrefix(number string) (string, bool) {
	i := strings.LastIndexByte(number, '_')
	if i <= 0 {
		return "", false
	}
	return number[:i], true
}

// SplitRawName splits a company name into its words before the legal form
// and the legal form as spelled at the end of the name ("" when the name
// does not end in one): "Wegner Consult GmbH" -> [Wegner Consult], "GmbH".
func SplitRawName(name string) (base []string, form string) {
	toks := strings.Fields(name)
	for k := min(6, len(toks)-1); k >= 1; k-- {
		tail := strings.Join(toks[len(toks)-k:], " ")
		b, _, ok := register.SplitLegalForm(tail)
		if ok && len(b) == 0 {
			return toks[:len(toks)-k], tail
		}
	}
	return toks, ""
}

// slot is where a register entry lives: court codes, type, suffix and the
// names the dump prints for them.
type slot struct {
	prefix, typ, suffix, registrar, former, state string
}

func (s slot) encode() string {
	return strings.Join([]string{s.prefix, s.typ, s.suffix, s.registrar, s.former, s.state}, "\x1f")
}

func decodeSlot(s string) slot {
	p := strings.Split(s, "\x1f")
	for len(p) < 6 {
		p = append(p, "")
	}
	return slot{p[0], p[1], p[2], p[3], p[4], p[5]}
}
