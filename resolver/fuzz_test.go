package resolver_test

import (
	"context"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

// FuzzResolve feeds arbitrary queries through parsing, retrieval and
// scoring over 2,000 real records: no panic, and every answer keeps the
// rules (at most one exact, confidence in [0,1], reasons on every
// candidate, nothing ineligible orderable) or is invalid_query.
func FuzzResolve(f *testing.F) {
	for _, q := range []string{"HRB 6684 München", "Amtsgericht München HRB 6684", "Kiel HRB 53 KI", "Müller GmbH Köln",
		"Oldenburg (Oldenburg) früher Varel HRB 53", "HRB 158855 B", "529900T8BM49AURSDO55", "5299-00t8 bm49AURSDO56",
		"Rheinbahn AG Düsseldorf", "GmbH & Co. KG", "e.V.", "VR 1234", "Objekt 1 GmbH", "\u00a0HRB\t1", "HRB 0", "ß"} {
		f.Add(q, "deep", true)
		f.Add(q, "", false)
	}
	idx := mustLoad(f, 2000)
	f.Fuzz(func(t *testing.T, query, mode string, discover bool) {
		res, err := resolver.Resolve(context.Background(), idx, resolver.Request{Query: query, Mode: mode, Discover: discover})
		if err != nil {
			if companydocs.ErrorCode(err) != companydocs.EINVALIDQUERY {
				t.Fatalf("Resolve(%q, %q): %v", query, mode, err)
			}
			return
		}
		checkInvariants(t, query, res)
	})
}
