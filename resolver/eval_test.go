//go:build !race

// The evaluation builds a real bleve index of the 36,599-record sample;
// under the race detector that takes minutes, so `make test` runs it in a
// separate step without -race.

package resolver_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/resolver"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite the golden top-3 file and the committed evaluation figures")

const (
	goldenFile  = "testdata/golden_top3.txt"
	summaryFile = "testdata/eval_summary.json"
)

// evalSummary holds the figures the evaluation must keep.
type evalSummary struct {
	Cases              int                `json:"cases"`
	Top1               float64            `json:"top1_accuracy"`
	MRR                float64            `json:"mrr"`
	ExactPrecision     float64            `json:"exact_precision"`
	ExactRecall        float64            `json:"exact_recall"`
	IneligibleOrdered  int                `json:"ineligible_orderable"`
	Top1ByKind         map[string]float64 `json:"top1_by_kind"`
	RegisterTop1       float64            `json:"register_top1"`
	NameVariantTop1    float64            `json:"name_variant_top1"`
	OfficerRecallAtTen float64            `json:"officer_recall_at_10"`
	// The kinds of clue beside names and numbers (clueKinds), on their
	// own: the share of queries whose answer is first, and among the
	// first three.
	ClueTop1ByKind map[string]float64 `json:"clue_top1_by_kind"`
	ClueHit3ByKind map[string]float64 `json:"clue_hit3_by_kind"`
}

// clueFloors are the least hit@3 of kinds of clue beside names and numbers.
var clueFloors = map[string]float64{
	"director": 0.90, "former_name": 0.95, "director_typo": 0.90,
	"address": 0.90, "address_postcode": 0.90, "address_deep": 0.90, "address_postcode_deep": 0.90,
}

// pasteFloors are the least top-1 of pasted blocks: with a
// register line (which must also be exact, exact_recall) and without.
var pasteFloors = map[string]float64{
	"paste_register": 0.99, "paste_register_oneline": 0.99, "paste_text": 0.97, "paste_text_oneline": 0.97,
}

// The sample's index, built once for the package's tests: the evaluation
// tests only search it, and building it (36,599 records) took each of
// them 7 s of CPU.
var (
	liveOnce   sync.Once
	liveDir    string
	liveSample *index.Live
	liveErr    error
)

// TestMain removes the sample's index once every test is done with it.
func TestMain(m *testing.M) {
	code := m.Run()
	if liveSample != nil {
		liveSample.Close()
	}
	if liveDir != "" {
		os.RemoveAll(liveDir)
	}
	os.Exit(code)
}

// mustBuildSampleIndex returns the real generation of the embedded sample,
// ingested on first use; callers must not change it.
func mustBuildSampleIndex(tb testing.TB) *index.Live {
	tb.Helper()
	liveOnce.Do(func() { liveSample, liveErr = buildSampleIndex() })
	if liveErr != nil {
		tb.Fatal(liveErr)
	}
	return liveSample
}

// buildSampleIndex ingests the embedded sample into a real generation in
// a directory of its own (liveDir), less the records the evaluation's
// absent cases name (heldOut).
func buildSampleIndex() (*index.Live, error) {
	cases, err := readEval()
	if err != nil {
		return nil, err
	}
	if liveDir, err = os.MkdirTemp("", "resolver-sample-"); err != nil {
		return nil, err
	}
	b, err := index.NewBuilder(liveDir, index.BuilderOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	inputs := []ingest.Input{{Path: "../data/sample.jsonl.bz2"}, {Path: "../data/lei_sample.csv"}}
	if _, err := ingest.Run(context.Background(), inputs, holdingOut{b, heldOut(cases)}, ingest.Options{}); err != nil {
		b.Abort()
		return nil, err
	}
	if _, err := b.Commit(index.Meta{Sources: []string{"sample.jsonl.bz2"}}); err != nil {
		return nil, err
	}
	return index.OpenLive(liveDir, index.LiveOptions{PollInterval: -1})
}

// holdingOut is a sink that stores every profile but those held out.
type holdingOut struct {
	*index.Builder
	out map[string]bool
}

// Put implements ingest.Sink.
func (h holdingOut) Put(p *companydocs.Profile) error {
	if h.out[p.ID] {
		return nil
	}
	return h.Builder.Put(p)
}

func TestEvaluation(t *testing.T) {
	cases := loadEval(t)
	gen := mustBuildSampleIndex(t)
	var golden strings.Builder
	st := newEvalStats()
	pages := make([][]companydocs.Candidate, len(cases))
	for i, c := range cases {
		res, err := resolver.Resolve(context.Background(), gen, c.request())
		if err != nil {
			t.Fatalf("%s %q: %v", c.Kind, c.Query, err)
		}
		checkInvariants(t, c.Query, res)
		pages[i] = res.Candidates
		st.add(t, c, res)
		fmt.Fprintf(&golden, "%s\t%s\n", c.Kind, c.Query)
		for i, cand := range res.Candidates {
			if i == 3 {
				break
			}
			if c.Kind == "short" || cand.ConfidenceLabel == companydocs.LabelNeedsVerification {
				// Weak candidates tie by the dozen (short queries by the
				// thousand); which of them the index returns first is not
				// part of the ranking, so only their label counts.
				fmt.Fprintf(&golden, "\t%d %s\n", i+1, cand.ConfidenceLabel)
				continue
			}
			fmt.Fprintf(&golden, "\t%d %s %.3f %s | %s %s\n", i+1, cand.ConfidenceLabel, cand.Confidence, cand.Name, cand.Court, cand.RegistryNumber)
		}
	}
	got := st.summary()
	out, _ := json.MarshalIndent(got, "", "  ")
	t.Logf("evaluation over %d cases:\n%s", len(cases), out)
	if *updateGolden {
		mustWrite(t, goldenFile, golden.String())
		mustWrite(t, summaryFile, string(out)+"\n")
		return
	}
	compareGolden(t, golden.String())
	checkFloors(t, got)
	t.Run("limit", func(t *testing.T) { checkLimitIndependence(t, gen, cases, pages) })
}

// checkLimitIndependence asks every query of the set with limits 1, 5 and
// 50 (pages holds its answers with the default limit, 10): the candidates
// of a smaller limit must be the first ones of the larger, in the same
// order and with the same confidence. Some pages of 50 must reach past
// the 30 hits a name search ranks together, so that the hits ranked after
// them are checked too.
func checkLimitIndependence(t *testing.T, gen resolver.Index, cases []evalCase, pages [][]companydocs.Candidate) {
	limits := []int{50, resolver.DefaultLimit, 5, 1}
	pastWindow := 0
	defer func() {
		if pastWindow == 0 {
			t.Error("no page of 50 holds more than 30 candidates: the hits after the ranked window went unchecked")
		}
		t.Logf("%d of %d pages of 50 hold more than 30 candidates", pastWindow, len(cases))
	}()
	for ci, c := range cases {
		var longest []companydocs.Candidate
		for _, limit := range limits {
			if limit == resolver.DefaultLimit {
				if len(pages[ci]) != min(limit, len(longest)) || !samePage(pages[ci], longest) {
					t.Errorf("%s %q: limit %d is not the start of limit 50", c.Kind, c.Query, limit)
				}
				continue
			}
			res, err := resolver.Resolve(context.Background(), gen, withLimit(c.request(), limit))
			if err != nil {
				t.Fatalf("%s %q limit %d: %v", c.Kind, c.Query, limit, err)
			}
			if longest == nil {
				longest = res.Candidates
				if len(longest) > 30 {
					pastWindow++
				}
				continue
			}
			if len(res.Candidates) != min(limit, len(longest)) {
				t.Errorf("%s %q: limit %d gives %d candidates, limit 50 gives %d", c.Kind, c.Query, limit, len(res.Candidates), len(longest))
				continue
			}
			for i, cand := range res.Candidates {
				if want := longest[i]; cand.ProfileID != want.ProfileID || cand.DiscoveryCandidateID != want.DiscoveryCandidateID || cand.Confidence != want.Confidence {
					t.Errorf("%s %q: limit %d candidate #%d is %s (%.3f), limit 50 has %s (%.3f)", c.Kind, c.Query, limit, i+1, cand.Name, cand.Confidence, want.Name, want.Confidence)
					break
				}
			}
		}
	}
}

// withLimit is r asking for limit candidates.
func withLimit(r resolver.Request, limit int) resolver.Request {
	r.Limit = limit
	return r
}

// samePage reports whether page is the start of longer.
func samePage(page, longer []companydocs.Candidate) bool {
	for i, c := range page {
		if i >= len(longer) || c.ProfileID != longer[i].ProfileID || c.DiscoveryCandidateID != longer[i].DiscoveryCandidateID || c.Confidence != longer[i].Confidence {
			return false
		}
	}
	return true
}

// checkFloors fails when a figure drops below the committed one or below
// the acceptance floors.
func checkFloors(t *testing.T, got evalSummary) {
	var want evalSummary
	data, err := os.ReadFile(summaryFile)
	if err != nil {
		t.Fatalf("read %s: %v (create it with -update-golden)", summaryFile, err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name           string
		got, committed float64
		floor          float64
	}{
		{"top-1 accuracy", got.Top1, want.Top1, 0},
		{"MRR", got.MRR, want.MRR, 0},
		{"exact-label precision", got.ExactPrecision, want.ExactPrecision, 1},
		{"exact-label recall", got.ExactRecall, want.ExactRecall, 0},
		{"register top-1", got.RegisterTop1, want.RegisterTop1, 0.97},
		{"name-variant top-1", got.NameVariantTop1, want.NameVariantTop1, 0.90},
	} {
		if f.got+1e-9 < f.committed || f.got+1e-9 < f.floor {
			t.Errorf("%s = %.4f, committed %.4f, floor %.2f", f.name, f.got, f.committed, f.floor)
		}
	}
	for kind, hit3 := range want.ClueHit3ByKind {
		if got.ClueHit3ByKind[kind]+1e-9 < hit3 {
			t.Errorf("%s hit@3 = %.4f, committed %.4f", kind, got.ClueHit3ByKind[kind], hit3)
		}
	}
	for kind, floor := range pasteFloors {
		if got.ClueTop1ByKind[kind]+1e-9 < floor {
			t.Errorf("%s top-1 = %.4f, floor %.2f", kind, got.ClueTop1ByKind[kind], floor)
		}
	}
	for kind, floor := range clueFloors {
		if got.ClueHit3ByKind[kind]+1e-9 < floor {
			t.Errorf("%s hit@3 = %.4f, floor %.2f", kind, got.ClueHit3ByKind[kind], floor)
		}
	}
	if got.IneligibleOrdered != 0 {
		t.Errorf("%d removed or unverified candidates are orderable", got.IneligibleOrdered)
	}
}

func compareGolden(t *testing.T, got string) {
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("read %s: %v (create it with -update-golden)", goldenFile, err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	shown := 0
	for i := 0; i < max(len(gl), len(wl)) && shown < 20; i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("golden line %d:\n  want %s\n  got  %s", i+1, w, g)
			shown++
		}
	}
	t.Errorf("ranking changed; review and run: go test ./resolver -run TestEvaluation -args -update-golden")
}

func mustWrite(t *testing.T, path, s string) {
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

type evalStats struct {
	withWant, top1, exactRight, exactAll, wantExact, exactFound, ineligible int
	rr                                                                      float64
	kindN, kindTop1                                                         map[string]int
	officerN, officerHit                                                    int
	clueN, clueTop1, clueHit3                                               map[string]int
}

func newEvalStats() *evalStats {
	return &evalStats{kindN: map[string]int{}, kindTop1: map[string]int{},
		clueN: map[string]int{}, clueTop1: map[string]int{}, clueHit3: map[string]int{}}
}

func (s *evalStats) add(t *testing.T, c evalCase, res *resolver.Result) {
	for i, cand := range res.Candidates {
		if cand.OrderingEligible && cand.Status != companydocs.StatusRegistered {
			s.ineligible++
		}
		if cand.ConfidenceLabel == companydocs.LabelExact {
			s.exactAll++
			if c.Want != "" && isWant(cand, c.Want) && !c.NoExact {
				s.exactRight++
			} else {
				t.Errorf("%s %q: wrong exact candidate #%d %s %s %s", c.Kind, c.Query, i+1, cand.Name, cand.Court, cand.RegistryNumber)
			}
		}
	}
	if c.WantExact {
		s.wantExact++
		if len(res.Candidates) > 0 && isWant(res.Candidates[0], c.Want) && res.Candidates[0].ConfidenceLabel == companydocs.LabelExact {
			s.exactFound++
		}
	}
	if c.Want == "" {
		return
	}
	rank := 0
	for i, cand := range res.Candidates {
		if isWant(cand, c.Want) {
			rank = i + 1
			break
		}
	}
	if clueKinds[c.Kind] {
		s.clueN[c.Kind]++
		if rank == 1 {
			s.clueTop1[c.Kind]++
		}
		if rank >= 1 && rank <= 3 {
			s.clueHit3[c.Kind]++
		} else if testing.Verbose() {
			t.Logf("miss %s %q: want %s (rank %d)", c.Kind, c.Query, c.WantName, rank)
		}
		return
	}
	if c.Kind == "officer" {
		s.officerN++
		if rank > 0 {
			s.officerHit++
		}
		return
	}
	s.withWant++
	s.kindN[c.Kind]++
	if rank == 1 {
		s.top1++
		s.kindTop1[c.Kind]++
	} else if testing.Verbose() {
		top := "none"
		if len(res.Candidates) > 0 {
			top = res.Candidates[0].Name
		}
		t.Logf("miss %s %q: want %s (rank %d), top %s", c.Kind, c.Query, c.WantName, rank, top)
	}
	if rank > 0 {
		s.rr += 1 / float64(rank)
	}
}

func (s *evalStats) summary() evalSummary {
	out := evalSummary{
		Cases:              s.withWant,
		Top1:               ratio(s.top1, s.withWant),
		MRR:                round4(s.rr / float64(max(s.withWant, 1))),
		ExactPrecision:     ratio(s.exactRight, s.exactAll),
		ExactRecall:        ratio(s.exactFound, s.wantExact),
		IneligibleOrdered:  s.ineligible,
		Top1ByKind:         map[string]float64{},
		OfficerRecallAtTen: ratio(s.officerHit, s.officerN),
		ClueTop1ByKind:     map[string]float64{},
		ClueHit3ByKind:     map[string]float64{},
	}
	for k, n := range s.clueN {
		out.ClueTop1ByKind[k], out.ClueHit3ByKind[k] = ratio(s.clueTop1[k], n), ratio(s.clueHit3[k], n)
	}
	if s.exactAll == 0 {
		out.ExactPrecision = 1
	}
	var regN, regTop, nameN, nameTop int
	for k, n := range s.kindN {
		out.Top1ByKind[k] = ratio(s.kindTop1[k], n)
		switch {
		case strings.HasPrefix(k, "register"):
			regN, regTop = regN+n, regTop+s.kindTop1[k]
		case strings.HasPrefix(k, "name_"):
			nameN, nameTop = nameN+n, nameTop+s.kindTop1[k]
		}
	}
	out.RegisterTop1, out.NameVariantTop1 = ratio(regTop, regN), ratio(nameTop, nameN)
	return out
}

// isWant matches a candidate by its profile id, or by its discovery id for
// unverified discovery candidates, which carry no profile id.
func isWant(c companydocs.Candidate, id string) bool {
	return c.ProfileID == id || (c.ProfileID == "" && c.DiscoveryCandidateID == id)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return round4(float64(a) / float64(b))
}

func round4(x float64) float64 { return math.Round(x*10000) / 10000 }
