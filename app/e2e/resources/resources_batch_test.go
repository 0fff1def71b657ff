//go:build resources

package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs/ingest"
	"companydocs/internal/e2e"
)

// TestResourcesBatchesFromManyAddresses: 16 addresses each send batches
// of 1,000 pasted imprints of real sample companies, one after another,
// while the bystander searches. Before, every batch was resolved at once
// on every core: the bystander's search p50 went from 4 to 97 ms and its
// p99 from 10 to 671 ms, the server peaked at 1,114 MiB, and the items
// not answered in the batch's time were charged. Now a node resolves
// --batches-in-flight batches (one per address; the others are refused
// before their body is read, with Retry-After), their queries on half the
// cores.
func TestResourcesBatchesFromManyAddresses(t *testing.T) {
	s := startResourceServer(t, "")
	blocks := pastedBlocks(t, 2000)
	const attackers, hold = 16, 20 * time.Second
	var (
		mu     sync.Mutex
		counts = map[string]int{}
	)
	s.underAttack(t, "16 addresses sending batches of 1,000 pasted blocks", func() {
		var wg sync.WaitGroup
		until := time.Now().Add(hold)
		for i := range attackers {
			wg.Go(func() {
				a := newBatchAttacker(fmt.Sprintf("127.0.1.%d", i+1))
				for n := 0; time.Now().Before(until); n++ {
					outcome := a.send(s.Base, batchOfBlocks(blocks, i*100+n*1000, 1000), until)
					mu.Lock()
					counts[outcome]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	})
	t.Logf("batches: %v", counts)
	if counts["answered"] == 0 {
		t.Errorf("no batch was answered: %v", counts)
	}
	for outcome, n := range counts {
		if strings.HasPrefix(outcome, "status 5") && outcome != "status 503" || strings.HasPrefix(outcome, "error") {
			t.Errorf("%d batches ended %s", n, outcome)
		}
	}
	if n := counts["items charged but not answered"]; n > 0 {
		t.Errorf("%d items the service did not answer were charged", n)
	}
}

// pastedBlocks makes n imprints of real sample companies, as pasted:
// the name, the address, the register line.
func pastedBlocks(t *testing.T, n int) []string {
	var out []string
	for _, line := range e2e.SampleLines(t, 3*n) {
		p, err := ingest.DecodeOffeneRegisterLine(line)
		if err != nil || p.Ref.Number == "" {
			continue
		}
		out = append(out, p.Name+"\n"+p.Address+"\nRegistergericht: Amtsgericht "+p.CourtName()+" "+string(p.Ref.Type)+" "+p.Ref.Number)
		if len(out) == n {
			break
		}
	}
	if len(out) < n/2 {
		t.Fatalf("only %d blocks from the sample", len(out))
	}
	return out
}

// batchOfBlocks is a batch body of n blocks from blocks, starting at from.
func batchOfBlocks(blocks []string, from, n int) string {
	items := make([]string, n)
	for i := range items {
		q, _ := json.Marshal(map[string]string{"query": blocks[(from+i)%len(blocks)]})
		items[i] = string(q)
	}
	return `{"queries":[` + strings.Join(items, ",") + `]}`
}

// batchAttacker sends batches from one loopback address.
type batchAttacker struct{ client *http.Client }

func newBatchAttacker(local string) *batchAttacker {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &batchAttacker{client: &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext}}}
}

// send posts one batch; a refusal's Retry-After is waited out (until at
// most until). It returns the outcome: answered, or the status.
func (a *batchAttacker) send(base, body string, until time.Time) string {
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/api/v1/documents/companies/search/batch", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return "error " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			time.Sleep(min(time.Duration(secs)*time.Second, time.Until(until)))
		}
		return "status " + strconv.Itoa(resp.StatusCode)
	}
	var res struct {
		Results []struct {
			Error *struct{ Code string } `json:"error"`
		} `json:"results"`
		NotCharged []int `json:"not_charged"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return "error " + err.Error()
	}
	unanswered := 0
	for _, r := range res.Results {
		if r.Error != nil && r.Error.Code == "service_unavailable" {
			unanswered++
		}
	}
	if unanswered > len(res.NotCharged) {
		return "items charged but not answered"
	}
	return "answered"
}
