package resolver_test

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"

	"companydocs"
	"companydocs/ingest"
	"companydocs/register"
	"companydocs/textfold"
)

// memIndex is a map-based Index over real records, for testing the
// resolver's rules without bleve. Its text search is plain token overlap.
type memIndex struct {
	byID    map[string]*companydocs.Profile
	byNum   map[string][]*companydocs.Profile
	byLEI   map[register.LEI][]*companydocs.Profile
	byToken map[string][]*companydocs.Profile
	all     []*companydocs.Profile
}

var (
	sampleOnce  sync.Once
	sampleIndex *memIndex
)

// mustSample loads the embedded sample of real OffeneRegister records.
func mustSample(tb testing.TB) *memIndex {
	tb.Helper()
	sampleOnce.Do(func() { sampleIndex = mustLoad(tb, 0) })
	if sampleIndex == nil {
		tb.Fatal("sample not loaded")
	}
	return sampleIndex
}

// mustLoad ingests the first n records of the sample (all when n is 0)
// and the embedded GLEIF records with the real ingest pipeline.
func mustLoad(tb testing.TB, n int) *memIndex {
	tb.Helper()
	m := &memIndex{byID: map[string]*companydocs.Profile{}, byNum: map[string][]*companydocs.Profile{},
		byLEI: map[register.LEI][]*companydocs.Profile{}, byToken: map[string][]*companydocs.Profile{}}
	inputs := []ingest.Input{{Path: "../data/sample.jsonl.bz2"}, {Path: "../data/lei_sample.csv"}}
	if _, err := ingest.Run(context.Background(), inputs, m, ingest.Options{MaxRecords: n}); err != nil {
		tb.Fatalf("ingest sample: %v", err)
	}
	return m
}

// Get implements ingest.Sink.
func (m *memIndex) Get(id string) (*companydocs.Profile, error) { return m.byID[id], nil }

// Put implements ingest.Sink: a new profile is indexed, a known one is
// replaced in place (its register number and name do not change).
func (m *memIndex) Put(p *companydocs.Profile) error {
	if old, ok := m.byID[p.ID]; ok {
		*old = *p
		for _, l := range p.LEIs {
			if !slices.Contains(m.byLEI[l.LEI], old) {
				m.byLEI[l.LEI] = append(m.byLEI[l.LEI], old)
			}
		}
		return nil
	}
	m.add(p)
	return nil
}

func (m *memIndex) add(p *companydocs.Profile) {
	m.byID[p.ID] = p
	m.all = append(m.all, p)
	key := string(p.Ref.Type) + "|" + p.Ref.Number
	m.byNum[key] = append(m.byNum[key], p)
	for _, l := range p.LEIs {
		m.byLEI[l.LEI] = append(m.byLEI[l.LEI], p)
	}
	seen := map[string]bool{}
	base, _, _ := register.SplitLegalForm(p.Name)
	for _, t := range append(base, textfold.Tokens(textfold.Fold(p.Seat))...) {
		for _, k := range []string{t, textfold.FoldPlain(t)} {
			if !seen[k] {
				seen[k] = true
				m.byToken[k] = append(m.byToken[k], p)
			}
		}
	}
}

func (m *memIndex) Profile(id string) (*companydocs.Profile, error) { return m.byID[id], nil }

func (m *memIndex) ByNumber(t register.Type, number string) ([]*companydocs.Profile, error) {
	return m.byNum[string(t)+"|"+number], nil
}

func (m *memIndex) ByLEI(lei register.LEI) ([]*companydocs.Profile, error) {
	return m.byLEI[lei], nil
}

func (m *memIndex) SearchText(ctx context.Context, q companydocs.TextQuery) ([]companydocs.Hit, error) {
	score := map[*companydocs.Profile]float64{}
	for _, t := range q.NameTerms {
		for _, p := range m.byToken[textfold.FoldPlain(t)] {
			if q.Discover || !p.NeedsDiscover() {
				score[p]++
			}
		}
	}
	hits := make([]companydocs.Hit, 0, len(score))
	for p := range score {
		hits = append(hits, companydocs.Hit{Profile: p})
	}
	sort.Slice(hits, func(i, j int) bool {
		si, sj := score[hits[i].Profile], score[hits[j].Profile]
		if si != sj {
			return si > sj
		}
		return hits[i].Profile.ID < hits[j].Profile.ID
	})
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits[min(q.Offset, len(hits)):], nil
}
