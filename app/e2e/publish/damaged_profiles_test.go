package publish

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/ingest"
	"companydocs/internal/e2e"
)

// TestDamagedProfileStoreNeverKillsANode, on a shared directory and on S3:
// a node follows a published generation; then a publication is recorded
// whose profiles.db is cut to 64 KiB, with a manifest and a meta.json
// that name the cut file's true size and SHA-256, so that the download
// checks. While the node tries it, a signed-in client previews orders of
// ids the served generation lacks (some only the damaged one holds) and
// of one it holds, from four connections at once. The node's process (this
// test's) never dies, no answer is a 500, the held id previews every time,
// the damaged generation's profiles answer nothing, and the node serves
// the first generation throughout, never the damaged one. bbolt maps the
// file, and a read of a page past a cut file's end is a SIGBUS that ended
// a node this way.
func TestDamagedProfileStoreNeverKillsANode(t *testing.T) {
	e2e.ForEachObjectStore(t, testDamagedProfileStore)
}

func testDamagedProfileStore(t *testing.T, f e2e.FollowSetup) {
	first := f.Publish(t, 1000)
	node := f.Node(t, "node-damaged")
	e2e.WaitServing(t, node, first)
	token := node.Session(t, "damage-client", 100)
	stopPreviews := startPreviews(node, token, sampleIDs(t, 1000, 3000))
	bad := f.PublishCutProfileStore(t, 3000, 64<<10)
	err := servesThroughout(node, first, bad)
	total := stopPreviews()
	if err != nil {
		t.Fatalf("%v\n%s", err, node.Logs.String())
	}
	t.Logf("previews: %s", total)
	total.check(t)
	if strings.Contains(node.Logs.String(), "panic in handler") {
		t.Errorf("a handler panicked:\n%s", node.Logs.String())
	}
}

// servesThroughout checks every 20 ms that s serves first until its logs
// have named the damaged generation bad for 3 s: it has met it then, and
// downloaded and refused it (a few hundred milliseconds on one machine).
func servesThroughout(s *e2e.TestServer, first, bad string) error {
	deadline := time.Now().Add(30 * time.Second)
	var metAt time.Time
	for metAt.IsZero() || time.Since(metAt) < 3*time.Second {
		if served := s.ServingGeneration(); served != first {
			return fmt.Errorf("the node serves %q, want %s throughout (the damaged one is %s)", served, first, bad)
		}
		if metAt.IsZero() && strings.Contains(s.Logs.String(), bad) {
			metAt = time.Now()
		}
		if metAt.IsZero() && time.Now().After(deadline) {
			return fmt.Errorf("the node's logs do not name the damaged generation %s after 30 s", bad)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// startPreviews starts previewWorkers clients previewing ids on s; the
// function it returns stops them and adds up their answers.
func startPreviews(s *e2e.TestServer, token string, ids previewIDs) func() previewCounts {
	stop := make(chan struct{})
	results := make(chan previewCounts, previewWorkers)
	for w := range previewWorkers {
		go func() { results <- previewUntil(s, token, ids, w, stop) }()
	}
	return func() previewCounts {
		close(stop)
		total := newPreviewCounts()
		for range previewWorkers {
			total.add(<-results)
		}
		return total
	}
}

// previewWorkers is how many clients preview at once.
const previewWorkers = 4

// previewIDs are the ids the test previews: held by the first generation,
// held only by the damaged one, held by none.
type previewIDs struct {
	held   string
	onlyIn []string
	none   []string
}

// sampleIDs picks the ids from the embedded sample: a live company among
// the first held records, companies of the records from held to all, and
// ids of no record (a held company's number with digits added).
func sampleIDs(t *testing.T, held, all int) previewIDs {
	t.Helper()
	var ids previewIDs
	seen := map[string]bool{}
	for i, line := range e2e.SampleLines(t, all) {
		p, err := ingest.DecodeOffeneRegisterLine(line)
		if err != nil {
			continue
		}
		switch {
		case i < held:
			seen[p.ID] = true
			if ids.held == "" && !p.Removed {
				ids.held = p.ID
			}
			if len(ids.none) < 10 {
				ref := p.Ref
				ref.Number += "97"
				ids.none = append(ids.none, companydocs.ProfileID(ref))
			}
		case !seen[p.ID] && len(ids.onlyIn) < 40:
			ids.onlyIn = append(ids.onlyIn, p.ID)
		}
	}
	if ids.held == "" || len(ids.onlyIn) < 40 || len(ids.none) < 10 {
		t.Fatalf("the sample gave too few ids: %+v", ids)
	}
	return ids
}

// previewCounts counts the answers to previews by what they said
// (previewOutcome), for each kind of id; failures are requests that got no
// answer.
type previewCounts struct {
	held, onlyIn, none map[string]int
	failures           []string
}

func newPreviewCounts() previewCounts {
	return previewCounts{held: map[string]int{}, onlyIn: map[string]int{}, none: map[string]int{}}
}

func (c *previewCounts) add(o previewCounts) {
	for status, n := range o.held {
		c.held[status] += n
	}
	for status, n := range o.onlyIn {
		c.onlyIn[status] += n
	}
	for status, n := range o.none {
		c.none[status] += n
	}
	c.failures = append(c.failures, o.failures...)
}

func (c previewCounts) String() string {
	sum := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	return fmt.Sprintf("%d in all; held id %v, ids only the damaged generation holds %v, ids of no record %v; %d without an answer",
		sum(c.held)+sum(c.onlyIn)+sum(c.none), c.held, c.onlyIn, c.none, len(c.failures))
}

// check: every preview answered, none a 500, the held id previewed with
// its company every time, and no other id with a company (the damaged
// generation's profile store answered nothing).
func (c previewCounts) check(t *testing.T) {
	t.Helper()
	if len(c.failures) > 0 {
		t.Errorf("%d previews got no answer, the first: %s", len(c.failures), c.failures[0])
	}
	for kind, m := range map[string]map[string]int{"held": c.held, "only in the damaged generation": c.onlyIn, "of no record": c.none} {
		for answer, n := range m {
			if strings.HasPrefix(answer, "500") {
				t.Errorf("previews of ids %s: %d answered %s", kind, n, answer)
			}
		}
	}
	if len(c.held) != 1 || c.held[withCompany] < 10 {
		t.Errorf("previews of the held id: %v, want at least 10, all %q", c.held, withCompany)
	}
	if c.onlyIn[withCompany] > 0 || c.none[withCompany] > 0 {
		t.Errorf("%d previews of ids only the damaged generation holds and %d of ids of no record named a company", c.onlyIn[withCompany], c.none[withCompany])
	}
}

// withCompany is the answer of a preview that found the company.
const withCompany = "200 company"

// previewUntil previews the ids in turn until stop is closed, starting at
// offset; it runs on a goroutine of its own, so it reports what a test
// helper would fail on.
func previewUntil(s *e2e.TestServer, token string, ids previewIDs, offset int, stop <-chan struct{}) previewCounts {
	c := newPreviewCounts()
	client := &http.Client{Timeout: 10 * time.Second}
	for i := offset; ; i++ {
		select {
		case <-stop:
			return c
		default:
		}
		id, counts := ids.held, c.held
		switch i % 3 {
		case 1:
			id, counts = ids.onlyIn[i%len(ids.onlyIn)], c.onlyIn
		case 2:
			id, counts = ids.none[i%len(ids.none)], c.none
		}
		answer, err := postPreview(client, s.Base, token, id)
		if err != nil {
			c.failures = append(c.failures, err.Error())
			continue
		}
		counts[answer]++
	}
}

// postPreview asks for the preview of an order of a CD of id and says
// what the answer said (previewOutcome).
func postPreview(client *http.Client, base, token, id string) (string, error) {
	body, _ := json.Marshal(e2e.OrderBody(id, "CD", "cd-single"))
	req, err := http.NewRequest("POST", base+"/api/v1/documents/orders/preview/", strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("preview %s: %w", id, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("preview %s: read the answer: %w", id, err)
	}
	return previewOutcome(resp.StatusCode, raw), nil
}

// previewOutcome names an answer by its status and what it said: with the
// company found (withCompany), blocked by its first blocker's code, or an
// error's code.
func previewOutcome(status int, raw []byte) string {
	var a struct {
		companydocs.Preview
		Error struct{ Code string } `json:"error"`
	}
	switch {
	case json.Unmarshal(raw, &a) != nil:
		return fmt.Sprintf("%d not JSON", status)
	case status != http.StatusOK:
		return fmt.Sprintf("%d %s", status, a.Error.Code)
	case a.Company != nil:
		return withCompany
	case len(a.Blockers) > 0:
		return fmt.Sprintf("%d blocked: %s", status, a.Blockers[0].Code)
	}
	return fmt.Sprintf("%d without company or blocker", status)
}
