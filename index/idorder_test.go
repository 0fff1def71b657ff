package index

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	bindex "github.com/blevesearch/bleve_index_api"

	"companydocs"
)

// The hits cut by rank are the hits cut by id: for the query variants of
// real profiles, at limits that cut through ties, the collector gives the
// same hits, in the same order, with the ranks as with the ids alone.
func TestIDOrderKeepsTheHits(t *testing.T) {
	_, stats := sharedTermStats(t)
	segs, err := segmentsOf(stats.r)
	if err != nil {
		t.Fatal(err)
	}
	ranks, err := rankIDs(segs)
	if err != nil {
		t.Fatal(err)
	}
	compared, cutTies := 0, 0
	forEachTextQuery(t, stats, func(q companydocs.TextQuery, tq *textQuery) {
		for _, limit := range []int{1, 3, 10} {
			_, top := collectWith(t, segs, tq, limit, true)
			if len(top.tied) > 0 {
				cutTies++
			}
			byID, err := top.hits(stats.r, limit, nil)
			if err != nil {
				t.Fatal(err)
			}
			byRank, err := top.hits(stats.r, limit, ranks)
			if err != nil {
				t.Fatal(err)
			}
			for i := range byID {
				byID[i].id = "" // the hits by rank get theirs with their profiles
			}
			if fmt.Sprint(byRank) != fmt.Sprint(byID) {
				t.Fatalf("%+v, limit %d: by rank %v, by id %v", q, limit, byRank, byID)
			}
			compared++
		}
	})
	if compared < 300 || cutTies < 20 {
		t.Fatalf("compared %d collections, %d with ties at the cut: too few to tell", compared, cutTies)
	}
}

// On an index of several segments with deleted documents, the ranks put
// the live documents in the order of their ids, and leave the deleted
// ones unranked.
func TestRankIDsOrdersEverySegment(t *testing.T) {
	// ids out of order within and across the segments
	r, segs := severalSegments(t, func(n int) (string, string) {
		id := fmt.Sprintf("p%03d", n*37%160)
		return id, "name " + id
	})
	ranks, err := rankIDs(segs)
	if err != nil {
		t.Fatal(err)
	}
	type ranked struct {
		id   string
		rank uint32
	}
	var live []ranked
	unranked := 0
	var iid bindex.IndexInternalID
	for doc, rank := range ranks {
		if rank == 0 {
			unranked++
			continue
		}
		iid = bindex.NewIndexInternalID(iid, uint64(doc))
		id, err := r.ExternalID(iid)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, ranked{id, rank})
	}
	if unranked != len(deletedOfSeveral) || len(live) != 160-len(deletedOfSeveral) {
		t.Fatalf("%d documents ranked, %d not: want %d and %d", len(live), unranked, 160-len(deletedOfSeveral), len(deletedOfSeveral))
	}
	slices.SortFunc(live, func(a, b ranked) int { return int(a.rank) - int(b.rank) })
	if !slices.IsSortedFunc(live, func(a, b ranked) int { return strings.Compare(a.id, b.id) }) {
		t.Fatalf("ranks do not follow the ids: %v", live)
	}
	for _, l := range live {
		if slices.Contains(deletedOfSeveral, l.id) {
			t.Fatalf("deleted document %s ranked %d", l.id, l.rank)
		}
	}
}

// A generation Live serves has its ids ranked, one opened alone has not,
// and both give the same hits.
func TestLiveRanksTheIDs(t *testing.T) {
	dir := t.TempDir()
	mustBuild(t, dir, loadRealProfiles(t)[:500])
	live, err := OpenLive(dir, LiveOptions{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	served, release := live.Acquire()
	defer release()
	alone := mustOpenCurrent(t, dir)
	if docs, _ := served.idx.DocCount(); uint64(len(served.idRanks())) != docs || alone.idRanks() != nil {
		t.Fatalf("served generation has %d ranks for %d documents, the one opened alone %d", len(served.idRanks()), docs, len(alone.idRanks()))
	}
	compared := 0
	for _, p := range loadRealProfiles(t)[:60] {
		for _, q := range queryVariants(p) {
			for _, limit := range []int{3, 10} {
				q.Limit = limit
				withRanks, err := served.SearchText(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				withIDs, err := alone.SearchText(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(withRanks, withIDs) {
					t.Fatalf("%+v: hits with ranks %v, with ids %v", q, hitIDs(withRanks), hitIDs(withIDs))
				}
				compared += len(withIDs)
			}
		}
	}
	if compared < 500 {
		t.Fatalf("compared %d hits: too few to tell", compared)
	}
}

func hitIDs(hits []companydocs.Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Profile.ID
	}
	return ids
}
