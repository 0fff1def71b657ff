package bench

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// LoadOptions bounds one load run: it stops after Requests requests or
// after Duration, whichever comes first.
type LoadOptions struct {
	Clients  int
	Requests int
	Duration time.Duration
	// Seed shuffles the order the queries are sent in.
	Seed uint64
}

// Searcher answers one query with the ids of its candidates, best first.
type Searcher func(ctx context.Context, q Query) ([]string, error)

// Run sends the queries (cycling through a shuffled copy) from
// opts.Clients concurrent clients and returns one sample per request and
// the wall time. Once opts.Duration has passed no request is started; the
// requests under way finish, so that no latency is cut short.
func Run(ctx context.Context, queries []Query, search Searcher, opts LoadOptions) ([]Sample, time.Duration) {
	order := make([]Query, len(queries))
	copy(order, queries)
	rnd := rand.New(rand.NewPCG(opts.Seed, 1))
	rnd.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	deadline := time.Now().Add(opts.Duration)
	var next atomic.Int64
	per := make([][]Sample, opts.Clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range opts.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				i := int(next.Add(1) - 1)
				if i >= opts.Requests || len(order) == 0 {
					return
				}
				per[c] = append(per[c], measure(ctx, search, order[i%len(order)]))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	var all []Sample
	for _, s := range per {
		all = append(all, s...)
	}
	return all, wall
}

func measure(ctx context.Context, search Searcher, q Query) Sample {
	start := time.Now()
	ids, err := search(ctx, q)
	s := Sample{Kind: q.Kind, Latency: time.Since(start), Err: err != nil && ctx.Err() == nil, Labelled: q.Want != ""}
	s.Top1 = s.Labelled && len(ids) > 0 && ids[0] == q.Want
	return s
}

// searchAnswer is the part of a search response the benchmark reads.
type searchAnswer struct {
	Candidates []struct {
		ProfileID string `json:"profile_id"`
	} `json:"candidates"`
}

// HTTPSearcher searches through the HTTP API of a running server.
func HTTPSearcher(baseURL string, client *http.Client) Searcher {
	url := baseURL + "/api/v1/documents/companies/search/"
	return func(ctx context.Context, q Query) ([]string, error) {
		body := map[string]any{"query": q.Query}
		if q.Mode != "" {
			body["mode"] = q.Mode
		}
		if q.Discover {
			body["discover"] = true
		}
		var ans searchAnswer
		status, err := Post(ctx, client, url, "", body, &ans)
		if err == nil && status != http.StatusOK {
			err = &statusError{status}
		}
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(ans.Candidates))
		for i, c := range ans.Candidates {
			ids[i] = c.ProfileID
		}
		return ids, nil
	}
}

type statusError struct{ status int }

func (e *statusError) Error() string { return http.StatusText(e.status) }
