//go:build resources

package resources

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/httpapi"
	"companydocs/internal/bench"
	"companydocs/internal/e2e"
)

// The attacker of the note scenarios: a client with the most webhook
// endpoints an account may register, each receiving every event of its
// orders.
const (
	noteAttacker  = "crash-1"
	noteEndpoints = companydocs.MaxWebhooksPerAccount
	// noteWorkers create and cancel at once, each on a profile of its
	// own, so that no two take one open-order slot. One keeps the
	// server's two cores (shared with the bystander and the deliveries
	// of ten endpoints) from measuring scheduling instead of storage.
	noteWorkers = 1
)

// What one create-and-cancel cycle may add to orders.db, from the caps.
// A cycle stores the order (its JSON without notes, about 3 kB for the
// sample's companies: orderBaseBytes bounds it, and the test checks
// that), with the cancel note 4 times (history note and params.note,
// next_step message and params.note) at up to 6 bytes a character once
// encoded (noteCopyBytes); the signed body of each of its 2 events,
// stored once (the order again, plus the type and time); and 2 events
// x noteEndpoints delivery records without bodies (deliveryBytes each,
// with their attempt). bbolt leaves pages half full at worst, and grows
// the file in steps of up to bboltAllocStep: hence the doubling and the
// slack.
const (
	orderBaseBytes = 6 << 10
	noteCopyBytes  = 4 * 6 * companydocs.MaxNote
	bodyExtraBytes = 100
	deliveryBytes  = 1 << 10
	bboltAllocStep = 16 << 20
)

// cycleBound bounds the bytes of one cycle whose notes have noteChars
// characters (at most MaxNote).
func cycleBound(noteChars int) int64 {
	order := orderBaseBytes + 4*6*noteChars
	bodies := 2 * (order + bodyExtraBytes)
	return int64(2 * (order + bodies + 2*noteEndpoints*deliveryBytes))
}

// TestResourcesLongCancelNotes: the attacker, with 10 webhook endpoints,
// creates free one-off orders and cancels 1,000 of them with a note of
// 65,000 characters (its body just under the 64 KiB limit). Each such
// cancel is refused (422, naming the field and the cap), the order is
// then cancelled without a note, and orders.db grows by no more than
// 1,000 cycles at the cap allow (cycleBound(MaxNote) each, 192 kB, plus
// one allocation step of bbolt: 208 MiB), while the server's memory and
// the bystander's p99 hold. Before the cap, every note was stored 4
// times in the order, once in each event's payload and once more per
// endpoint in each delivery record: 3.4 MB a cycle.
func TestResourcesLongCancelNotes(t *testing.T) {
	s, recv, db, before := startNoteScenario(t)
	note := strings.Repeat("x", 65000)
	const cycles = 1000
	bound := int64(cycles)*cycleBound(companydocs.MaxNote) + bboltAllocStep
	var a *noteAttack
	s.underAttack(t, "long cancel notes", func() {
		a = s.cancelCycles(t, cycles, note, func() bool { return diskUse(t, db).size-before.size > bound })
	})
	recv.waitFor(t, a.events()*noteEndpoints)
	after := diskUse(t, db)
	t.Logf("long cancel notes: %d cycles, %d cancels with the long note refused; orders.db grew by %s (%s allocated), %s a cycle; bound %s",
		a.cycles, a.refused, mb(after.size-before.size), mb(after.allocated-before.allocated), kb((after.size-before.size)/int64(max(a.cycles, 1))), mb(bound))
	if a.cycles < cycles {
		t.Errorf("the attack stopped after %d of %d cycles: orders.db grew past the bound", a.cycles, cycles)
	}
	if a.cancelledBytes > orderBaseBytes {
		t.Errorf("a cancelled order without a note is %d bytes, over the %d cycleBound assumes", a.cancelledBytes, orderBaseBytes)
	}
	if a.refused != a.cycles || a.failures != "" {
		t.Errorf("%d of %d cancels with a 65,000-character note refused, want all (%s)", a.refused, a.cycles, a.failures)
	}
	if grew := after.size - before.size; grew > bound {
		t.Errorf("orders.db grew by %s, over the bound of %s", mb(grew), mb(bound))
	}
	recv.check(t)
}

// startNoteScenario starts the server with noteEndpoints webhook
// endpoints of the attacker on a receiver, and returns orders.db and its
// size before the attack.
func startNoteScenario(t *testing.T) (*resourceServer, *noteReceiver, string, disk) {
	t.Helper()
	s := startResourceServer(t, "")
	recv := newNoteReceiver(t)
	recv.register(t, s, noteEndpoints)
	db := filepath.Join(s.dir, bbolt.DatabaseFile)
	return s, recv, db, diskUse(t, db)
}

// TestResourcesCappedCancelNotes: the same attacker cancels 300 orders
// with notes at the cap (1,000 characters). Each event's payload is
// stored once, however many endpoints receive it, so a cycle costs about
// the order with its notes and the payloads of its two events, not ten
// copies of each payload: the growth per cycle stays under cycleBound and
// under the ten copies of the two events' payloads that per-delivery
// bodies stored.
func TestResourcesCappedCancelNotes(t *testing.T) {
	s, recv, db, before := startNoteScenario(t)
	const cycles = 300
	var a *noteAttack
	s.underAttack(t, "capped cancel notes", func() {
		a = s.cancelCycles(t, cycles, strings.Repeat("x", companydocs.MaxNote), func() bool { return false })
	})
	recv.waitFor(t, a.events()*noteEndpoints)
	after := diskUse(t, db)
	perCycle := (after.allocated - before.allocated) / cycles
	tenCopies := int64(noteEndpoints * (a.createdBytes + a.cancelledBytes))
	t.Logf("capped cancel notes: %d cycles; orders.db grew by %s (%s allocated), %s allocated a cycle; the created and cancelled order are %s and %s, ten copies of both %s; bound %s a cycle",
		a.cycles, mb(after.size-before.size), mb(after.allocated-before.allocated), kb(perCycle), kb(int64(a.createdBytes)), kb(int64(a.cancelledBytes)), kb(tenCopies), kb(cycleBound(companydocs.MaxNote)))
	t.Logf("capped cancel notes: at %s", a.perHour(perCycle))
	if a.cancelledBytes > orderBaseBytes+noteCopyBytes {
		t.Errorf("a cancelled order is %d bytes, over the %d cycleBound assumes", a.cancelledBytes, orderBaseBytes+noteCopyBytes)
	}
	if a.refused != 0 || a.failures != "" {
		t.Errorf("%d cancels with a note at the cap refused (%s), want none", a.refused, a.failures)
	}
	if perCycle > cycleBound(companydocs.MaxNote) || perCycle >= tenCopies {
		t.Errorf("a cycle added %s to orders.db, want under %s (cycleBound) and under %s (ten copies of the payload)", kb(perCycle), kb(cycleBound(companydocs.MaxNote)), kb(tenCopies))
	}
	recv.check(t)
}

// noteAttack is what cancelCycles did.
type noteAttack struct {
	mu             sync.Mutex
	cycles         int // orders created and cancelled
	refused        int // cancels with the note refused with 422
	createdBytes   int // the JSON of a created order, as the create answered
	cancelledBytes int // the JSON of a cancelled order, as the cancel answered
	took           time.Duration
	failures       string
}

// perHour is the disk the attack would fill in an hour at its pace,
// cycle bytes a cycle: no rate limit bounds creates and cancels.
func (a *noteAttack) perHour(cycle int64) string {
	rate := float64(a.cycles) / a.took.Seconds()
	def := httpapi.DefaultConfig()
	budget := def.WriteRate*3600/2 + float64(def.WriteBurst)/2 // a cycle is two changes
	return fmt.Sprintf("%.0f cycles/s without the write budget (the scenario runs with --write-rate 0), %.1f GiB an hour; with the default budget (%g changes/s, burst %d) %.0f cycles and %.0f MiB in the first hour",
		rate, rate*3600*float64(cycle)/(1<<30), def.WriteRate, def.WriteBurst, budget, budget*float64(cycle)/(1<<20))
}

// events is how many events the cycles made: created and cancelled.
func (a *noteAttack) events() int { return 2 * a.cycles }

func (a *noteAttack) fail(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failures == "" {
		a.failures = fmt.Sprintf(format, args...)
	}
}

// cancelCycles creates n free one-off orders as the attacker and cancels
// each with note; a refused note is followed by a cancel without one, so
// that the order's slot frees. Every 50 cycles it asks over whether to
// stop (the old code's file outgrows the bound within a few hundred).
func (s *resourceServer) cancelCycles(t *testing.T, n int, note string, over func() bool) *noteAttack {
	a := &noteAttack{}
	began := time.Now()
	defer func() { a.took = time.Since(began) }()
	noteBody, _ := json.Marshal(map[string]string{"note": note})
	var wg sync.WaitGroup
	var stop sync.Once
	stopped := make(chan struct{})
	for w := range noteWorkers {
		wg.Go(func() {
			profile := s.profiles[len(s.profiles)-1-w] // the bystander previews from the front
			for i := w; i < n; i += noteWorkers {
				select {
				case <-stopped:
					return
				default:
				}
				if !s.cancelCycle(a, profile, noteBody) {
					return
				}
				if i%50 == 0 && over() {
					stop.Do(func() { close(stopped) })
				}
			}
		})
	}
	wg.Wait()
	return a
}

// cancelCycle creates one order and cancels it; false on a failure.
func (s *resourceServer) cancelCycle(a *noteAttack, profile string, noteBody []byte) bool {
	token := s.tokens[noteAttacker]
	var o struct{ ID string }
	status, raw, err := s.Exchange("POST", "/api/v1/documents/orders/", "application/json", token, e2e.OrderJSON(profile, "AD", "ad-single"), "")
	if err != nil || status != http.StatusCreated || json.Unmarshal(raw, &o) != nil {
		a.fail("create: %d %v %.200s", status, err, raw)
		return false
	}
	created := len(raw)
	cancel := "/api/v1/documents/orders/" + o.ID + "/cancel"
	status, raw, err = s.Exchange("POST", cancel, "application/json", token, string(noteBody), "")
	refused := status == http.StatusUnprocessableEntity
	if refused {
		if want := fmt.Sprintf(`Field \"note\" is longer than %d characters`, companydocs.MaxNote); !strings.Contains(string(raw), want) {
			a.fail("the refusal does not name the field and the cap: %.300s", raw)
		}
		status, raw, err = s.Exchange("POST", cancel, "application/json", token, "", "")
	}
	if err != nil || status != http.StatusOK {
		a.fail("cancel: %d %v %.200s", status, err, raw)
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cycles++
	a.createdBytes = max(a.createdBytes, created)
	a.cancelledBytes = max(a.cancelledBytes, len(raw))
	if refused {
		a.refused++
	}
	return true
}

// disk is a file's size and the bytes of disk it takes (bbolt grows the
// file by truncating it, which allocates nothing until pages are
// written).
type disk struct{ size, allocated int64 }

func diskUse(t *testing.T, path string) disk {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatalf("no block count for %s", path)
	}
	return disk{size: fi.Size(), allocated: st.Blocks * 512}
}

func mb(n int64) string { return bench.MiB(n) }

func kb(n int64) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }

// noteReceiver answers every delivery 204 after verifying its Standard
// Webhooks signature, and counts them.
type noteReceiver struct {
	srv *httptest.Server

	mu        sync.Mutex
	secrets   map[string]string // path -> secret
	delivered int
	failures  []string
}

func newNoteReceiver(t *testing.T) *noteReceiver {
	r := &noteReceiver{secrets: map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *noteReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		err = e2e.VerifyDelivery(r.secrets, req, body)
	}
	if err != nil {
		if len(r.failures) < 5 {
			r.failures = append(r.failures, fmt.Sprintf("%s: %v", req.URL.Path, err))
		}
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.delivered++
	w.WriteHeader(http.StatusNoContent)
}

// register registers n endpoints of the attacker, one path each.
func (r *noteReceiver) register(t *testing.T, s *resourceServer, n int) {
	t.Helper()
	for i := range n {
		path := fmt.Sprintf("/hook/%d", i)
		var ep companydocs.WebhookEndpoint
		body := fmt.Sprintf(`{"url":%q,"description":"endpoint %d"}`, r.srv.URL+path, i)
		if status := s.Post(t, "/api/v1/webhooks/", s.tokens[noteAttacker], body, "", &ep); status != http.StatusCreated || ep.Secret == "" {
			t.Fatalf("register endpoint %d: status %d", i, status)
		}
		r.mu.Lock()
		r.secrets[path] = ep.Secret
		r.mu.Unlock()
	}
}

// waitFor waits until n deliveries arrived, up to a minute: the file's
// growth is measured once every event is fanned out and delivered.
func (r *noteReceiver) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	got := 0
	for time.Now().Before(deadline) {
		r.mu.Lock()
		got = r.delivered
		r.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("only %d of %d deliveries arrived within a minute", got, n)
}

func (r *noteReceiver) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.failures {
		t.Errorf("receiver: %s", f)
	}
}
