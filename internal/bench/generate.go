package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
)

// GenOptions configures a synthetic corpus.
type GenOptions struct {
	Seed uint64
	// Count is the number of records to generate.
	Count int
	// LivePerMille of the records are currently registered (300 like the
	// real dump's 30%).
	LivePerMille int
	// Workers generate blocks in parallel; the output does not depend on it.
	Workers int
	// Gzip writes the output as gzip members, one per block.
	Gzip bool
	// BlockSize is the number of records per block (default 8192).
	BlockSize int
}

// numberBase returns the first synthetic register number: the next
// multiple of 100,000 above every real number.
func (m *Model) numberBase() int {
	return (m.MaxNumber/100000 + 1) * 100000
}

// Generate writes opts.Count synthetic records drawn from m to w. Record i
// depends only on the model, the seed and i, so the output is the same
// bytes for the same inputs whatever the number of workers.
func Generate(m *Model, opts GenOptions, w io.Writer) error {
	if opts.BlockSize < 1 {
		opts.BlockSize = 8192
	}
	if opts.LivePerMille == 0 {
		opts.LivePerMille = 300
	}
	blocks := (opts.Count + opts.BlockSize - 1) / opts.BlockSize
	queue := make(chan chan []byte, max(1, opts.Workers))
	go func() {
		defer close(queue)
		for b := range blocks {
			ch := make(chan []byte, 1)
			queue <- ch
			go func() { ch <- m.block(opts, b) }()
		}
	}()
	var werr error
	for ch := range queue {
		data := <-ch
		if werr == nil {
			_, werr = w.Write(data)
		}
	}
	if werr != nil {
		return fmt.Errorf("write corpus: %w", werr)
	}
	return nil
}

// block encodes the records of one block.
func (m *Model) block(opts GenOptions, b int) []byte {
	var buf bytes.Buffer
	var out io.Writer = &buf
	var zw *gzip.Writer
	if opts.Gzip {
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		out = zw
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	end := min(opts.Count, (b+1)*opts.BlockSize)
	for i := b * opts.BlockSize; i < end; i++ {
		r := m.Record(opts.Seed, i, opts.LivePerMille)
		_ = enc.Encode(&r) // writes to memory cannot fail
	}
	if zw != nil {
		zw.Close()
	}
	return buf.Bytes()
}

// Record draws synthetic record i.
func (m *Model) Record(seed uint64, i, livePerMille int) Record {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	s := decodeSlot(m.Slots.Pick(r))
	number := strconv.Itoa(m.numberBase() + i)
	live := r.IntN(1000) < livePerMille
	rec := Record{
		CompanyNumber:    s.prefix + "_" + s.typ + number + s.suffix,
		JurisdictionCode: "de",
		Name:             m.name(r, s.typ),
		CurrentStatus:    StatusRemoved,
		RetrievedAt:      m.Retrieved.Pick(r),
	}
	if live {
		rec.CurrentStatus = StatusLive
	}
	seat := m.seat(r, s.registrar)
	rec.AllAttributes = Attributes{
		RegisterArt: s.typ, RegisterNummer: number, RegisterNummerSuffix: s.suffix,
		AdditionalData: docFlags(m.Docs[live].Pick(r)), FederalState: s.state,
		FormerRegistrar: s.former, NativeCompanyNumber: nativeNumber(s, number),
		RegisteredOffice: seat, Registrar: s.registrar,
	}
	rec.Officers = m.officers(r, s.typ)
	if r.IntN(1000) < m.PrevPerMille {
		rec.PreviousNames = []PreviousName{{CompanyName: m.name(r, s.typ)}}
	}
	if r.IntN(1000) < m.AddrPerMille && seat != "" {
		rec.RegisteredAddress = m.address(r, s.typ, seat)
	}
	return rec
}

// name draws base words from the type's vocabulary and a legal-form spelling.
func (m *Model) name(r *rand.Rand, typ string) string {
	n := max(1, m.NameLen[typ].Pick(r))
	words := make([]string, 0, n+1)
	for range n {
		words = append(words, m.Vocab[typ].Pick(r))
	}
	if form := m.Forms[typ].Pick(r); form != "" {
		words = append(words, form)
	}
	return strings.Join(words, " ")
}

func (m *Model) seat(r *rand.Rand, registrar string) string {
	if w := m.Seats[registrar]; w != nil && w.Len() > 0 {
		return w.Pick(r)
	}
	return m.AllSeats.Pick(r)
}

func (m *Model) officers(r *rand.Rand, typ string) []Officer {
	n := m.Officers[typ].Pick(r)
	if n == 0 {
		return nil
	}
	out := make([]Officer, n)
	for i := range out {
		first, last := m.First.Pick(r), m.Last.Pick(r)
		o := Officer{Name: first + " " + last, Position: m.Positions[typ].Pick(r), Type: "person",
			StartDate:       date(r),
			OtherAttributes: OfficerAttributes{City: m.AllSeats.Pick(r), Firstname: first, Lastname: last}}
		if r.IntN(1000) < m.DismissedPerMille {
			o.EndDate, o.OtherAttributes.Dismissed = date(r), true
		}
		out[i] = o
	}
	return out
}

func (m *Model) address(r *rand.Rand, typ, seat string) string {
	street := m.Vocab[typ].Pick(r)
	return fmt.Sprintf("%sstraße %d, %05d %s.", street, 1+r.IntN(120), 1000+r.IntN(98000), seat)
}

func date(r *rand.Rand) string {
	return fmt.Sprintf("%04d-%02d-%02d", 1990+r.IntN(30), 1+r.IntN(12), 1+r.IntN(28))
}

func docFlags(pattern string) map[string]bool {
	d := make(map[string]bool, len(docKeys))
	for i, k := range docKeys {
		d[k] = i < len(pattern) && pattern[i] == '1'
	}
	return d
}

// nativeNumber renders the register's own notation, e.g. "Paderborn
// früher Höxter HRA 53" or "Kiel HRB 53 EC".
func nativeNumber(s slot, number string) string {
	parts := []string{s.registrar}
	if s.former != "" {
		parts = append(parts, "früher", s.former)
	}
	parts = append(parts, s.typ, number)
	if s.suffix != "" {
		parts = append(parts, s.suffix)
	}
	return strings.Join(parts, " ")
}
