package resolver_test

import (
	"bufio"
	"compress/bzip2"
	"context"
	"os"
	"sort"
	"sync"
	"testing"

	"companydocs"
	"companydocs/ingest"
)

// memIndex is a map-based Index over real records, for testing the
// resolver's rules without bleve. Its text search is plain token overlap.
type memIndex struct {
	byID    map[string]*companydocs.Profile
	byNum   map[string][]*companydocs.Profile
	byLEI   map[companydocs.LEI][]*companydocs.Profile
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

// mustLoad reads the first n records of the sample (all when n is 0).
func mustLoad(tb testing.TB, n int) *memIndex {
	tb.Helper()
	f, err := os.Open("../data/sample.jsonl.bz2")
	if err != nil {
		tb.Fatalf("open sample: %v", err)
	}
	defer f.Close()
	m := &memIndex{byID: map[string]*companydocs.Profile{}, byNum: map[string][]*companydocs.Profile{},
		byLEI: map[companydocs.LEI][]*companydocs.Profile{}, byToken: map[string][]*companydocs.Profile{}}
	sc := bufio.NewScanner(bzip2.NewReader(f))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() && (n == 0 || len(m.all) < n) {
		if p, err := ingest.DecodeOffeneRegisterLine(sc.Bytes()); err == nil {
			m.add(p)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read sample: %v", err)
	}
	return m
}

func (m *memIndex) add(p *companydocs.Profile) {
	if old, ok := m.byID[p.ID]; ok && old.RetrievedAt.After(p.RetrievedAt) {
		return
	} else if ok {
		*old = *p
		return
	}
	m.byID[p.ID] = p
	m.all = append(m.all, p)
	key := string(p.Ref.Type) + "|" + p.Ref.Number
	m.byNum[key] = append(m.byNum[key], p)
	for _, l := range p.LEIs {
		m.byLEI[l.LEI] = append(m.byLEI[l.LEI], p)
	}
	seen := map[string]bool{}
	base, _, _ := companydocs.SplitLegalForm(p.Name)
	for _, t := range append(base, companydocs.Tokens(companydocs.Fold(p.Seat))...) {
		for _, k := range []string{t, companydocs.FoldPlain(t)} {
			if !seen[k] {
				seen[k] = true
				m.byToken[k] = append(m.byToken[k], p)
			}
		}
	}
}

func (m *memIndex) Profile(id string) (*companydocs.Profile, error) { return m.byID[id], nil }

func (m *memIndex) ByNumber(t companydocs.RegisterType, number string) ([]*companydocs.Profile, error) {
	return m.byNum[string(t)+"|"+number], nil
}

func (m *memIndex) ByLEI(lei companydocs.LEI) ([]*companydocs.Profile, error) {
	return m.byLEI[lei], nil
}

func (m *memIndex) SearchText(ctx context.Context, q companydocs.TextQuery) ([]companydocs.Hit, error) {
	score := map[*companydocs.Profile]float64{}
	for _, t := range q.NameTerms {
		for _, p := range m.byToken[companydocs.FoldPlain(t)] {
			score[p]++
		}
	}
	hits := make([]companydocs.Hit, 0, len(score))
	for p, s := range score {
		hits = append(hits, companydocs.Hit{Profile: p, Score: s})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Profile.ID < hits[j].Profile.ID
	})
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, nil
}
