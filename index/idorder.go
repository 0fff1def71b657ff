package index

import (
	"context"
	"runtime/debug"

	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// A generation served by Live ranks its documents by profile id, so that
// the collector can put matches of equal score in id order without
// reading their ids: a cold read of zap's stored fields each, two fifths
// of them for matches tied with the worst of the top that then do not
// make the cut (docs/benchmarks-history.md, "Search at 5M: the drive skips, ties
// ranked, profile-guided optimisation").
//
// Live reads the ranks when it opens the generation, before the
// generation serves: 3 to 5 s and 20 MB for 5 million documents, which the
// generation's other users (an ingest comparing against it) never pay.
// Without them (a generation opened alone, or a failed read) the collector
// reads the ids; the hits are the same either way
// (TestIDOrderKeepsTheHits).

// readIDRanks reads the rank of every document's id, through a reader and
// segments opened as a search opens its own. A fault reading the files
// marks the generation faulted, as a search's would.
func (g *Generation) readIDRanks() (err error) {
	defer recoverFault(&err, g, debug.SetPanicOnFault(true))
	stats, err := g.newTermStats(context.Background())
	if err != nil {
		return err
	}
	defer stats.close()
	segs, err := stats.segments()
	if err != nil {
		return err
	}
	ranks, err := rankIDs(segs)
	if err != nil {
		return err
	}
	g.ranks.Store(&ranks)
	return nil
}

// idRanks returns the documents' ranks by id, indexed by document number;
// nil if they were not read.
func (g *Generation) idRanks() []uint32 {
	if r := g.ranks.Load(); r != nil {
		return *r
	}
	return nil
}

// rankIDs ranks the documents of segs by id, from 1: the position of the
// id in the _id field's dictionary, in which scorch merges its segments'
// dictionaries in term order. A deleted document keeps rank 0. A
// read-only generation has one snapshot, so its searches number the
// documents as segs does (index/DESIGN.md, "What is relied on in bleve").
func rankIDs(segs *segments) ([]uint32, error) {
	dicts := make([]segment.TermDictionary, len(segs.snaps))
	for i, s := range segs.snaps {
		d, err := s.Segment().Dictionary(idField)
		if err != nil {
			return nil, err
		}
		dicts[i] = d
	}
	ranks := make([]uint32, segs.numbers())
	terms, err := segs.r.FieldDict(idField)
	if err != nil {
		return nil, err
	}
	defer terms.Close()
	var (
		term []byte
		list segment.PostingsList
		iter segment.PostingsIterator
		rank uint32
	)
	for {
		e, err := terms.Next()
		if err != nil || e == nil {
			return ranks, err
		}
		rank++
		term = append(term[:0], e.Term...)
		for i, d := range dicts {
			if list, err = d.PostingsList(term, segs.snaps[i].Deleted(), list); err != nil {
				return nil, err
			}
			iter = list.Iterator(false, false, false, iter)
			for p, err := iter.Next(); p != nil || err != nil; p, err = iter.Next() {
				if err != nil {
					return nil, err
				}
				ranks[segs.offsets[i]+p.Number()] = rank
			}
		}
	}
}

// idField is the field bleve indexes each document's id in.
const idField = "_id"
