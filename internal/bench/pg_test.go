package bench

import (
	"context"
	"testing"

	"companydocs/internal/realdata"
)

// TestTrigramBaselineFindsExactNames starts a real PostgreSQL cluster,
// loads the small real chunk and the fixtures and checks that the trigram query ranks a
// record first for its own name.
func TestTrigramBaselineFindsExactNames(t *testing.T) {
	set := buildSmallSet(t, 5, 1)
	ctx := context.Background()
	pg, err := StartPG(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	conn, err := pg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	fixtures := realdata.Path(t, "offeneregister", "fixtures_665.jsonl")
	load, err := LoadCorpus(ctx, conn, []string{smallChunk(t), fixtures}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if load.Rows != 5727+665 || load.IndexBytes == 0 {
		t.Fatalf("loaded %d rows, index %d bytes; want 6392 rows and an index", load.Rows, load.IndexBytes)
	}
	search, done, err := PGSearcher(ctx, pg, 1, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	hits, total := 0, 0
	for _, q := range set.Queries {
		if q.Kind != KindNameExact {
			continue
		}
		ids, err := search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		total++
		if len(ids) > 0 && ids[0] == q.Want {
			hits++
		}
	}
	// exact names are unique in the chunk, so similarity 1 ranks them first
	// unless another name folds to the same string
	if total == 0 || hits < total*9/10 {
		t.Fatalf("trigram search ranked %d of %d exact names first", hits, total)
	}
}
