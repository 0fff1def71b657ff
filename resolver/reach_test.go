//go:build !race

package resolver_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"companydocs"
	"companydocs/resolver"
)

// TestEveryVerifiedProfileReachable walks the profiles of the embedded
// sample and the LEI sample (but those the evaluation holds out of its
// index) and asks for verified ones by their name and
// by their register reference, as a client does (standard mode, discover
// off, limit 50): the profile must be among the candidates. It asks for
// every profile a GLEIF record made or enriched (an LEI link) and for
// every tenth of the others, which keeps the test at seconds (all 36,618
// take over a minute on two cores). A name shared by
// more profiles than half a page is asked with its seat; a name longer
// than a query may be is asked by its first words.
func TestEveryVerifiedProfileReachable(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	mem := mustSample(t)
	names := nameCounts(mem)
	held := heldOut(loadEval(t)) // left out of the evaluation's index
	var verified []*companydocs.Profile
	for i, p := range mem.all {
		if p.Verified && !held[p.ID] && (len(p.LEIs) > 0 || i%10 == 0) {
			verified = append(verified, p)
		}
	}
	var (
		mu       sync.Mutex
		failures []string
		next     = make(chan *companydocs.Profile)
		wg       sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				for _, q := range reachQueries(p, names[baseKey(p.Name)]) {
					if why := reach(gen, q, p); why != "" {
						mu.Lock()
						failures = append(failures, why)
						mu.Unlock()
					}
				}
			}
		}()
	}
	for _, p := range verified {
		next <- p
	}
	close(next)
	wg.Wait()
	for i, f := range failures {
		if i == 20 {
			t.Errorf("... and %d more", len(failures)-20)
			break
		}
		t.Error(f)
	}
	t.Logf("%d verified profiles asked by name and register reference, %d misses", len(verified), len(failures))
}

// reachQueries are the name and the register reference of p.
func reachQueries(p *companydocs.Profile, sameName int) []string {
	name := p.Name
	if sameName > resolver.MaxLimit/2 {
		name += " " + p.Seat
	}
	for utf8.RuneCountInString(name) > resolver.MaxQueryRunes {
		name = name[:strings.LastIndex(name, " ")]
	}
	return []string{name, p.CourtName() + " " + p.Ref.NumberKey()}
}

func reach(gen resolver.Index, q string, p *companydocs.Profile) string {
	res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: q, Limit: resolver.MaxLimit})
	if err != nil {
		return fmt.Sprintf("%q: %v", q, err)
	}
	for _, c := range res.Candidates {
		if c.ProfileID == p.ID {
			return ""
		}
	}
	return fmt.Sprintf("%s %s (%s) is not found by %q; notes: %s", p.Source, p.Name, p.ID, q, strings.Join(res.Understanding.Notes, "; "))
}
