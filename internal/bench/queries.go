package bench

import (
	"cmp"
	"container/heap"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"companydocs"
	"companydocs/ingest"
	"companydocs/internal/imprint"
	"companydocs/register"
	"companydocs/resolver"
	"companydocs/textfold"
)

// Query kinds of a query set.
const (
	KindRegister     = "register"      // register reference in a varied notation
	KindNameExact    = "name_exact"    // the name as registered
	KindNameTypo     = "name_typo"     // one edit in the longest word
	KindNameForm     = "name_form"     // another spelling of the legal form
	KindNameCity     = "name_city"     // name followed by the seat
	KindLEI          = "lei"           // an LEI linked to a corpus record
	KindLEIDiscovery = "lei_discovery" // an LEI no corpus record carries (discover: true)
	KindOfficer      = "officer"       // officer's first and last name and seat (deep mode)
	KindShort        = "short"         // one or two common words: no single right answer

	// Clue kinds: the other clues a client may hold, in standard mode.
	KindDirector   = "director"    // an officer's first and last name alone
	KindFormerName = "former_name" // a name the company carried before
	KindAddress    = "address"     // the registered address as registered
	KindNoise      = "noise"       // the name with the words people type around it
	KindLEIPrefix  = "lei_prefix"  // an LEI pasted with its "LEI:" label

	// Pasted blocks: an imprint, a letter's footer or an e-mail signature
	// of several lines, laid out by package imprint, in standard mode.
	KindPasteRegister = "paste_register" // a block with a register line
	KindPasteText     = "paste_text"     // a block without one
)

// NameKinds are the kinds answered by name similarity alone, the ones a
// pg_trgm index can answer too.
var NameKinds = []string{KindNameExact, KindNameTypo, KindNameForm, KindNameCity}

// ClueKinds are measured alone, outside the mixed workload, so that the
// mix stays comparable with figures taken before they existed.
var ClueKinds = []string{KindDirector, KindFormerName, KindAddress, KindNoise, KindLEIPrefix, KindPasteRegister, KindPasteText}

// Query is one labelled search of a query set.
type Query struct {
	Kind     string `json:"kind"`
	Query    string `json:"query"`
	Mode     string `json:"mode,omitempty"`
	Discover bool   `json:"discover,omitempty"`
	// Want is the profile id that should rank first; empty when the query
	// has no single right answer.
	Want     string `json:"want,omitempty"`
	WantName string `json:"want_name,omitempty"`
}

// QueryOptions configures BuildQuerySet.
type QueryOptions struct {
	Seed    uint64
	PerKind int // queries per kind (LEI kinds: as many as the GLEIF files allow, up to PerKind)
	Workers int
	// GLEIF lists the GLEIF files the index was built with.
	GLEIF []string
	// Orderable is how many orderable profile ids to collect for the order
	// benchmark.
	Orderable int
}

// QuerySet is the outcome of BuildQuerySet.
type QuerySet struct {
	Queries []Query
	// Orderable holds ids of live profiles that hold AD and CD documents.
	Orderable []string
	// Records is the number of corpus records read.
	Records int
}

// candidate is a corpus record kept as raw material for queries.
type candidate struct {
	hash       uint64
	id, name   string
	seat       string
	ref        register.Ref
	nameKey    uint64
	officers   [][2]string
	positions  []string // of officers
	officerKey []uint64
	live       bool
	previous   []string
	address    string
}

// scanState is the per-worker state of BuildQuerySet.
type scanState struct {
	names, refs, officers map[uint64]int32
	cands, orderable      hashHeap[candidate]
	// pasteCands are live records with an address a pasted block can
	// split (most live records have none): a sample of their own, so that
	// cands, and the kinds drawn from them, stay as they were.
	pasteCands hashHeap[candidate]
	gleifHits  map[string][]candidate
	records    int
}

// hashHeap keeps the k entries with the smallest hashes: a sample that does
// not depend on the order records are read in.
type hashHeap[T any] struct {
	k     int
	items []T
	hash  func(*T) uint64
}

func (h *hashHeap[T]) Len() int           { return len(h.items) }
func (h *hashHeap[T]) Less(i, j int) bool { return h.hash(&h.items[i]) > h.hash(&h.items[j]) }
func (h *hashHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *hashHeap[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *hashHeap[T]) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// offer keeps v when its hash is among the k smallest seen.
func (h *hashHeap[T]) offer(v T) {
	if len(h.items) < h.k {
		heap.Push(h, v)
		return
	}
	if h.hash(&v) < h.hash(&h.items[0]) {
		h.items[0] = v
		heap.Fix(h, 0)
	}
}

func hashOf(seed uint64, parts ...string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(strconv.FormatUint(seed, 10)))
	for _, p := range parts {
		f.Write([]byte{0})
		f.Write([]byte(p))
	}
	return f.Sum64()
}

func newScanState(sample, orderables int) *scanState {
	return &scanState{
		names: map[uint64]int32{}, refs: map[uint64]int32{}, officers: map[uint64]int32{},
		cands:      hashHeap[candidate]{k: sample, hash: func(c *candidate) uint64 { return c.hash }},
		orderable:  hashHeap[candidate]{k: orderables, hash: func(c *candidate) uint64 { return c.hash }},
		pasteCands: hashHeap[candidate]{k: sample / 6, hash: func(c *candidate) uint64 { return c.hash }},
		gleifHits:  map[string][]candidate{},
	}
}

// add counts one corpus record and offers it as a candidate.
func (s *scanState) add(seed uint64, r *Record, gleifKeys map[string]bool) {
	ref, err := register.ParseCompanyNumber(r.CompanyNumber)
	if err != nil {
		return
	}
	s.records++
	c := candidate{hash: hashOf(seed, r.CompanyNumber), id: companydocs.ProfileID(ref), name: r.Name,
		seat: r.AllAttributes.RegisteredOffice, ref: ref, live: r.IsLive(), nameKey: hashOf(0, register.NameKey(r.Name))}
	s.names[c.nameKey]++
	s.refs[hashOf(0, refKey(ref))]++
	for _, p := range r.PreviousNames {
		c.previous = append(c.previous, p.CompanyName)
	}
	c.address = r.RegisteredAddress
	for _, o := range r.Officers {
		first, last := o.OtherAttributes.Firstname, o.OtherAttributes.Lastname
		if first == "" || last == "" {
			continue
		}
		k := hashOf(0, textfold.Fold(first+" "+last))
		s.officers[k]++
		c.officers = append(c.officers, [2]string{first, last})
		c.positions = append(c.positions, o.Position)
		c.officerKey = append(c.officerKey, k)
	}
	if key := registerKey(ref.Court, ref.Type, ref.Number); gleifKeys[key] {
		s.gleifHits[key] = append(s.gleifHits[key], c)
	}
	if !r.IsLive() {
		c.name = "" // removed records make no labelled queries but count above
	}
	s.cands.offer(c)
	if r.IsLive() && c.seat != "" && imprint.AddressPattern.MatchString(trimAddress(c.address)) {
		s.pasteCands.offer(c)
	}
	d := r.AllAttributes.AdditionalData
	if r.IsLive() && d["AD"] && d["CD"] {
		s.orderable.offer(candidate{hash: c.hash, id: c.id})
	}
}

// refKey identifies an entry by court, type, number and suffix, ignoring
// a former court: what a register query without "früher" names.
func refKey(ref register.Ref) string {
	return registerKey(ref.Court, ref.Type, ref.Number) + "|" + ref.Suffix
}

func (s *scanState) merge(o *scanState) {
	for _, p := range []struct{ dst, src map[uint64]int32 }{{s.names, o.names}, {s.refs, o.refs}, {s.officers, o.officers}} {
		for k, n := range p.src {
			p.dst[k] += n
		}
	}
	for _, c := range o.cands.items {
		s.cands.offer(c)
	}
	for _, c := range o.orderable.items {
		s.orderable.offer(c)
	}
	for _, c := range o.pasteCands.items {
		s.pasteCands.offer(c)
	}
	for k, cs := range o.gleifHits {
		s.gleifHits[k] = append(s.gleifHits[k], cs...)
	}
	s.records += o.records
}

// BuildQuerySet reads the corpus and draws a labelled, mixed query set from
// it. The same corpus, GLEIF files and options give the same set.
func BuildQuerySet(corpus []string, opts QueryOptions) (*QuerySet, error) {
	gleif, err := ReadGLEIF(opts.GLEIF)
	if err != nil {
		return nil, err
	}
	gleifKeys := map[string]bool{}
	for i := range gleif {
		if k := gleifKey(&gleif[i]); k != "" {
			gleifKeys[k] = true
		}
	}
	workers := max(1, opts.Workers)
	states := make([]*scanState, workers)
	for i := range states {
		states[i] = newScanState(opts.PerKind*60, opts.Orderable)
	}
	err = ScanRecords(corpus, workers, func(w int, r *Record) { states[w].add(opts.Seed, r, gleifKeys) })
	if err != nil {
		return nil, err
	}
	s := states[0]
	for _, o := range states[1:] {
		s.merge(o)
	}
	b := &setBuilder{s: s, rnd: rand.New(rand.NewPCG(opts.Seed, 0x9e3779b9)), per: opts.PerKind, used: map[string]bool{}}
	b.cands = sortedByHash(s.cands.items)
	b.pasteCands = sortedByHash(s.pasteCands.items)
	b.build(gleif)
	set := &QuerySet{Queries: b.out, Records: s.records}
	for _, c := range sortedByHash(s.orderable.items) {
		set.Orderable = append(set.Orderable, c.id)
	}
	return set, nil
}

func sortedByHash(cs []candidate) []candidate {
	out := slices.Clone(cs)
	slices.SortFunc(out, func(a, b candidate) int { return cmp.Compare(a.hash, b.hash) })
	return out
}

// setBuilder turns candidates into queries, using each record at most once.
type setBuilder struct {
	s     *scanState
	rnd   *rand.Rand
	per   int
	cands []candidate
	// pasteCands are the candidates of the pasted kinds.
	pasteCands []candidate
	used       map[string]bool
	out        []Query
}

func (b *setBuilder) build(gleif []ingest.GLEIFRecord) {
	b.each(KindRegister, b.register)
	b.each(KindNameExact, func(c candidate) (Query, bool) { return b.named(c, KindNameExact, c.name) })
	b.each(KindNameTypo, func(c candidate) (Query, bool) { return b.named(c, KindNameTypo, typo(b.rnd, c.name)) })
	b.each(KindNameForm, func(c candidate) (Query, bool) { return b.named(c, KindNameForm, formVariant(b.rnd, c.name)) })
	b.each(KindNameCity, b.nameCity)
	b.each(KindOfficer, b.officer)
	b.leis(gleif)
	b.shorts()
	// clue kinds last: the kinds above stay as they were drawn before
	b.each(KindDirector, b.director)
	b.each(KindFormerName, b.formerName)
	b.each(KindAddress, b.address)
	b.each(KindNoise, func(c candidate) (Query, bool) {
		if c.seat == "" {
			return Query{}, false
		}
		return b.named(c, KindNoise, "Firma "+c.name+" in "+c.seat)
	})
	b.leiPrefixes()
	// pasted blocks after the clue kinds, which stay as they were drawn
	b.eachOf(b.pasteCands, KindPasteRegister, func(c candidate) (Query, bool) { return b.pasted(c, KindPasteRegister) })
	b.eachOf(b.pasteCands, KindPasteText, func(c candidate) (Query, bool) { return b.pasted(c, KindPasteText) })
}

// pasted lays out a block from the record, with a register line for
// KindPasteRegister, where the name is unique in the corpus (and, with a
// register line, the reference too).
func (b *setBuilder) pasted(c candidate, kind string) (Query, bool) {
	register := kind == KindPasteRegister
	if b.s.names[c.nameKey] != 1 || register && !b.uniqueRef(c.ref) {
		return Query{}, false
	}
	r := imprint.Record{Name: c.name, Ref: c.ref, Seat: c.seat, Address: trimAddress(c.address)}
	for i, o := range c.officers {
		r.Officers = append(r.Officers, companydocs.Officer{FirstName: o[0], LastName: o[1], Position: c.positions[i]})
	}
	if !imprint.Usable(&r) {
		return Query{}, false
	}
	q := imprint.Block(&r, b.rnd, imprint.Options{Register: register})
	if utf8.RuneCountInString(q) > resolver.MaxQueryRunes {
		return Query{}, false
	}
	return Query{Kind: kind, Query: q, Want: c.id, WantName: c.name}, true
}

// trimAddress is the registered address without the full stop the
// register prints after it.
func trimAddress(a string) string { return strings.TrimSuffix(strings.TrimSpace(a), ".") }

// uniqueRef reports whether a reference names one entry of the corpus, at
// a known court and without a former court.
func (b *setBuilder) uniqueRef(ref register.Ref) bool {
	_, ok := register.CourtByCode(ref.Court)
	return ok && ref.FormerCourt == "" && b.s.refs[hashOf(0, refKey(ref))] == 1
}

// director asks for a company by an officer whose name is unique, in
// standard mode and without the seat.
func (b *setBuilder) director(c candidate) (Query, bool) {
	for i, o := range c.officers {
		if b.s.officers[c.officerKey[i]] == 1 {
			return Query{Kind: KindDirector, Query: o[0] + " " + o[1], Want: c.id, WantName: c.name}, true
		}
	}
	return Query{}, false
}

// formerName asks by a previous name that no company carries now.
func (b *setBuilder) formerName(c candidate) (Query, bool) {
	for _, p := range c.previous {
		if b.s.names[hashOf(0, register.NameKey(p))] == 0 && len(strings.Fields(p)) >= 2 {
			return Query{Kind: KindFormerName, Query: p, Want: c.id, WantName: c.name}, true
		}
	}
	return Query{}, false
}

// address asks by the registered address as the register writes it.
func (b *setBuilder) address(c candidate) (Query, bool) {
	a := trimAddress(c.address)
	if a == "" || !strings.ContainsAny(a, "0123456789") {
		return Query{}, false
	}
	return Query{Kind: KindAddress, Query: a, Want: c.id, WantName: c.name}, true
}

// leiPrefixes repeats the linked LEI queries with the label people paste.
func (b *setBuilder) leiPrefixes() {
	n := 0
	for _, q := range b.out {
		if q.Kind == KindLEI && n < b.per {
			q.Kind, q.Query = KindLEIPrefix, "LEI: "+q.Query
			b.out = append(b.out, q)
			n++
		}
	}
}

// each makes up to b.per queries of one kind from unused candidates.
func (b *setBuilder) each(kind string, make func(candidate) (Query, bool)) {
	b.eachOf(b.cands, kind, make)
}

// eachOf makes up to b.per queries of one kind from unused candidates of cands.
func (b *setBuilder) eachOf(cands []candidate, kind string, make func(candidate) (Query, bool)) {
	n := 0
	for _, c := range cands {
		if n == b.per {
			return
		}
		if c.name == "" || b.used[c.id] {
			continue
		}
		if q, ok := make(c); ok {
			b.used[c.id] = true
			b.out = append(b.out, q)
			n++
		}
	}
}

// register writes the reference in one of the notations people use.
func (b *setBuilder) register(c candidate) (Query, bool) {
	if !b.uniqueRef(c.ref) {
		return Query{}, false
	}
	court, _ := register.CourtByCode(c.ref.Court)
	num := c.ref.Number
	if c.ref.Suffix != "" {
		num += " " + c.ref.Suffix
	}
	t := string(c.ref.Type)
	forms := []string{
		t + " " + num + " " + court.Name,
		"Amtsgericht " + court.Name + " " + t + " " + num,
		court.Name + ", " + t + " " + num,
		court.Name + " " + t + " " + num,
	}
	if c.ref.Suffix == "" {
		forms = append(forms, t+num+" "+court.Name)
	}
	if c.ref.Type == register.HRB || c.ref.Type == register.HRA {
		forms = append(forms, "HR "+t[2:]+" "+num+" "+court.Name)
	}
	return Query{Kind: KindRegister, Query: forms[b.rnd.IntN(len(forms))], Want: c.id, WantName: c.name}, true
}

// named labels a name query when the name is unique in the corpus.
func (b *setBuilder) named(c candidate, kind, q string) (Query, bool) {
	if q == "" || b.s.names[c.nameKey] != 1 || len(strings.Fields(c.name)) < 2 {
		return Query{}, false
	}
	return Query{Kind: kind, Query: q, Want: c.id, WantName: c.name}, true
}

func (b *setBuilder) nameCity(c candidate) (Query, bool) {
	if c.seat == "" {
		return Query{}, false
	}
	return b.named(c, KindNameCity, c.name+" "+c.seat)
}

// officer asks for a company by an officer whose name is unique.
func (b *setBuilder) officer(c candidate) (Query, bool) {
	for i, o := range c.officers {
		if b.s.officers[c.officerKey[i]] == 1 && c.seat != "" {
			return Query{Kind: KindOfficer, Query: o[0] + " " + o[1] + " " + c.seat, Mode: "deep", Want: c.id, WantName: c.name}, true
		}
	}
	return Query{}, false
}

// leis labels LEIs that link to exactly one corpus entry (live preferred,
// as the ingest links them) and LEIs of fully corroborated records that
// link to none (discovery candidates).
func (b *setBuilder) leis(gleif []ingest.GLEIFRecord) {
	var linked, discovery int
	for i := range gleif {
		r := &gleif[i]
		hits := b.s.gleifHits[gleifKey(r)]
		switch {
		case len(hits) == 0 && discovery < b.per && r.IsGerman() && r.ValidationSources == "FULLY_CORROBORATED":
			discovery++
			b.out = append(b.out, Query{Kind: KindLEIDiscovery, Query: string(r.LEI), Discover: true,
				Want: companydocs.DiscoveryID(r.LEI), WantName: r.LegalName})
		case len(hits) > 0 && linked < b.per:
			if c, ok := oneTarget(hits); ok && similarNames(c.name, r.LegalName) {
				linked++
				b.out = append(b.out, Query{Kind: KindLEI, Query: string(r.LEI), Want: c.id, WantName: c.name})
			}
		}
	}
}

func oneTarget(hits []candidate) (candidate, bool) {
	if len(hits) == 1 {
		return hits[0], true
	}
	var live []candidate
	for _, h := range hits {
		if h.live {
			live = append(live, h)
		}
	}
	if len(live) != 1 {
		return candidate{}, false
	}
	return live[0], true
}

// similarNames is a loose check that a GLEIF name and a register name
// name the same company (half of the words shared).
func similarNames(a, b string) bool {
	if a == "" {
		return false
	}
	ta, _, _ := register.SplitLegalForm(a)
	tb, _, _ := register.SplitLegalForm(b)
	shared := 0
	for _, t := range ta {
		if slices.Contains(tb, t) {
			shared++
		}
	}
	return 2*shared >= max(len(ta), len(tb))
}

// shorts asks for the most common words of the sampled names, alone or
// with a legal form: queries without one right answer.
func (b *setBuilder) shorts() {
	counts := map[string]int{}
	for _, c := range b.cands {
		base, _, _ := register.SplitLegalForm(c.name)
		for _, t := range base {
			if len([]rune(t)) >= 3 {
				counts[t]++
			}
		}
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(counts[b]-counts[a], cmp.Compare(a, b)) })
	words = words[:min(len(words), b.per)]
	for i, w := range words {
		q := w
		if i%3 == 1 {
			q += " GmbH"
		}
		b.out = append(b.out, Query{Kind: KindShort, Query: q})
	}
}
