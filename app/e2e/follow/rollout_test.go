package follow

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"

	"github.com/jackc/pgx/v5"
)

// rolloutCase is a real, watchable record of the sample that generation A
// holds as not orderable (struck off, or without its AD printout) and
// generation B holds as it is in the register.
type rolloutCase struct {
	name   string
	record map[string]any
	blight func(rec map[string]any) // what A does to it
}

// pickRolloutCases picks two watchable records among recs: one A strikes
// off, one A holds without its AD printout.
func pickRolloutCases(t *testing.T, recs []map[string]any) []rolloutCase {
	t.Helper()
	blights := []rolloutCase{
		{name: "struck off in A", blight: func(r map[string]any) { r["current_status"] = "removed" }},
		{name: "no AD in A", blight: func(r map[string]any) {
			r["all_attributes"].(map[string]any)["additional_data"].(map[string]any)["AD"] = false
		}},
	}
	var out []rolloutCase
	for _, rec := range recs {
		if len(out) == len(blights) {
			break
		}
		if e2e.Watchable(rec) && len(strings.Fields(rec["name"].(string))) >= 2 {
			c := blights[len(out)]
			c.record = rec
			out = append(out, c)
		}
	}
	if len(out) < len(blights) {
		t.Fatal("the sample has too few watchable records")
	}
	return out
}

// writeDump writes recs as a dump, each case blighted when blighted is
// set, and returns its path.
func writeDump(t *testing.T, recs []map[string]any, cases []rolloutCase, blighted bool) string {
	t.Helper()
	byNumber := map[string]rolloutCase{}
	for _, c := range cases {
		byNumber[c.record["company_number"].(string)] = c
	}
	out := make([]map[string]any, 0, len(recs))
	for _, r := range recs {
		if c, ok := byNumber[r["company_number"].(string)]; ok && blighted {
			r = e2e.CloneRecord(r)
			c.blight(r)
		}
		out = append(out, r)
	}
	return e2e.DumpFile(t, out)
}

// orderableID is the profile id s serves c's record under, orderable
// with AD.
func orderableID(t *testing.T, s *e2e.TestServer, c rolloutCase) string {
	t.Helper()
	return e2e.ServedProfileID(t, s, c.name, c.record, func(p *companydocs.Profile) bool {
		return p.OrderingEligible() && p.HasDocument(companydocs.DocumentAD)
	})
}

// gateTally counts a node's answers during a rollout, checking on each
// 503 that it carries Retry-After.
type gateTally struct {
	t        *testing.T
	statuses map[string]int
	noRetry  int
}

func newGateTally(t *testing.T) *gateTally {
	return &gateTally{t: t, statuses: map[string]int{}}
}

// ask sends one request and counts its answer under what.
func (g *gateTally) ask(s *e2e.TestServer, what, method, path, token string, body any) (int, []byte) {
	g.t.Helper()
	headers := []string{"Authorization", "Bearer " + token}
	raw, _ := json.Marshal(body)
	status, answer, h := s.Do(g.t, method, path, string(raw), headers...)
	g.statuses[what+" "+http.StatusText(status)]++
	if status == http.StatusServiceUnavailable && h.Get("Retry-After") == "" {
		g.noRetry++
	}
	return status, answer
}

// TestRolloutOrdersAndWatchesWhatTheNewGenerationMakesOrderable, on a
// shared directory and on S3: generation A holds one real company as
// struck off and another without its AD printout; generation B holds both
// as the register does. While a node downloads B slowly and still serves
// A, a signed-in client previews, orders and watches both through it:
// never refused (no 422, no blocker), every 503 with Retry-After, and an
// order and a watch of each made before the node swaps.
func TestRolloutOrdersAndWatchesWhatTheNewGenerationMakesOrderable(t *testing.T) {
	e2e.ForEachObjectStore(t, testRolloutOrdersAndWatches)
}

func testRolloutOrdersAndWatches(t *testing.T, f e2e.FollowSetup) {
	cases, fast, slow, first, token := startRollout(t, f, "300000")
	tally := newGateTally(t)
	for _, c := range cases {
		id := orderableID(t, fast, c)
		ordered, watched := false, false
		for deadline := time.Now().Add(60 * time.Second); !(ordered && watched); time.Sleep(50 * time.Millisecond) {
			if slow.ServingGeneration() != first {
				t.Fatalf("%s: the slow node swapped to %s before an order and a watch went through: %v", c.name, slow.ServingGeneration(), tally.statuses)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no order and watch after 60 s: %v", c.name, tally.statuses)
			}
			var preview e2e.PreviewAnswer
			status, raw := tally.ask(slow, "preview", "POST", "/api/v1/documents/orders/preview/", token, e2e.OrderBody(id, "AD", "ad-single"))
			if status == http.StatusOK {
				if err := json.Unmarshal(raw, &preview); err != nil || !preview.OrderingEligible {
					t.Fatalf("%s: the node behind blocked the preview of a company the newest generation makes orderable: %s", c.name, raw)
				}
			}
			if !ordered {
				status, raw = tally.ask(slow, "order", "POST", "/api/v1/documents/orders/", token, e2e.OrderBody(id, "AD", "ad-single"))
				ordered = status == http.StatusCreated
				if status == http.StatusUnprocessableEntity {
					t.Fatalf("%s: the node behind refused the order: %s", c.name, raw)
				}
			}
			if !watched {
				status, raw = tally.ask(slow, "watch", "POST", "/api/v1/watches/", token, map[string]string{"company_profile_id": id})
				watched = status == http.StatusCreated
				if status == http.StatusUnprocessableEntity {
					t.Fatalf("%s: the node behind refused the watch: %s", c.name, raw)
				}
			}
		}
	}
	t.Logf("answers of the node behind: %v", tally.statuses)
	if tally.noRetry > 0 {
		t.Errorf("%d answers 503 without Retry-After", tally.noRetry)
	}
}

// startRollout publishes generation A (the cases struck off or without
// their AD printout), starts a fast node and one that downloads at rate
// bytes a second, signs a client in on the slow one, publishes B (the
// cases as the register holds them) and waits for the fast node to serve
// it. first is the generation the slow node serves meanwhile.
func startRollout(t *testing.T, f e2e.FollowSetup, rate string) (cases []rolloutCase, fast, slow *e2e.TestServer, first, token string) {
	t.Helper()
	recs := e2e.DecodedSample(t, 3000)
	cases = pickRolloutCases(t, recs[:1500])
	f.PublishDump(t, writeDump(t, recs[:1500], cases, true))
	fast = f.Node(t, "fast")
	slow = e2e.StartServer(t, t.TempDir(), "--store", f.Store, "--index-source", f.Source, "--follow-interval", "100ms",
		"--node-name", "slow", "--download-rate", rate)
	first = slow.ServingGeneration()
	token = slow.Session(t, "acme", 100)
	second := f.PublishDump(t, writeDump(t, recs, cases, false))
	e2e.WaitServing(t, fast, second)
	return cases, fast, slow, first, token
}

// TestRolloutWhileTheMetastoreIsLocked: while a node is behind, the
// metastore's table of publications is locked for 6 s. An order preview,
// an order and a watch of a company the newest generation makes orderable
// are answered 503 with Retry-After meanwhile, never 422; once the lock
// goes they go through.
func TestRolloutWhileTheMetastoreIsLocked(t *testing.T) {
	t.Parallel() // mostly waiting on a slow download and a lock
	f := e2e.NewFollowSetup(t)
	cases, fast, slow, first, token := startRollout(t, f, "250000")
	id := orderableID(t, fast, cases[0])

	unlock := lockPublications(t, f.Store)
	tally := newGateTally(t)
	for until := time.Now().Add(5 * time.Second); time.Now().Before(until); time.Sleep(100 * time.Millisecond) {
		for _, ask := range []struct {
			what, path string
			body       any
		}{
			{"preview", "/api/v1/documents/orders/preview/", e2e.OrderBody(id, "AD", "ad-single")},
			{"order", "/api/v1/documents/orders/", e2e.OrderBody(id, "AD", "ad-single")},
			{"watch", "/api/v1/watches/", map[string]string{"company_profile_id": id}},
		} {
			status, raw := tally.ask(slow, ask.what, "POST", ask.path, token, ask.body)
			if status != http.StatusServiceUnavailable {
				t.Fatalf("%s while the metastore is locked: %d %s, want 503", ask.what, status, raw)
			}
		}
	}
	unlock()
	if slow.ServingGeneration() != first {
		t.Fatalf("the slow node swapped during the lock")
	}
	t.Logf("answers while the metastore was locked: %v", tally.statuses)
	if tally.noRetry > 0 {
		t.Errorf("%d answers 503 without Retry-After", tally.noRetry)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		status, raw := tally.ask(slow, "order after", "POST", "/api/v1/documents/orders/", token, e2e.OrderBody(id, "AD", "ad-single"))
		if status == http.StatusCreated {
			break
		}
		if status == http.StatusUnprocessableEntity || time.Now().After(deadline) {
			t.Fatalf("the order after the lock: %d %s", status, raw)
		}
	}
}

// lockPublications locks the metastore's table of publications, as a
// long migration or a stuck transaction would, until the returned unlock.
func lockPublications(t *testing.T, url string) (unlock func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, "LOCK TABLE published_generations IN ACCESS EXCLUSIVE MODE")
	}
	if err != nil {
		conn.Close(ctx)
		t.Fatal(err)
	}
	done := false
	unlock = func() {
		if !done {
			done = true
			tx.Rollback(ctx)
			conn.Close(ctx)
		}
	}
	t.Cleanup(unlock)
	return unlock
}
