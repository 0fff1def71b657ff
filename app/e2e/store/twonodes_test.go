package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/ordering"
	"companydocs/postgres"
)

// TestTwoNodes runs two real server processes (this test binary
// re-executed as "companydocs serve") on 127.0.0.1, each on its own port
// and its own copy of one index generation built once, over one
// PostgreSQL database (issue 19, acceptance):
//   - identical creates sent to both nodes at once, with one
//     Idempotency-Key and without a key, make one order and one debit;
//   - an account with credits for N orders gets exactly N of 4N
//     concurrent creates spread over both nodes, and its balance ends at 0
//     without going below;
//   - a sign-out on node A is refused on node B (the delay is logged; the
//     bound is ordering.SharedSessionCacheTTL);
//   - an order created on A is paid, requested and delivered through B's
//     operator API, and its PDF downloads from A byte for byte.
func TestTwoNodes(t *testing.T) {
	ctx := context.Background()
	_, url := e2e.StartTestCluster(t)
	dirA := t.TempDir()
	e2e.MustBuild(t, dirA, e2e.TwoNodesRecords, e2e.SampleFile(t))
	dirB := filepath.Join(t.TempDir(), "b")
	if err := os.CopyFS(dirB, os.DirFS(dirA)); err != nil {
		t.Fatalf("copy the generation to the second node: %v", err)
	}
	profiles := e2e.CrashProfiles(t, e2e.TwoNodesRecords)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	accounts := ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
	defer accounts.Close()

	a := startNode(t, dirA, url)
	defer a.Kill(t)
	b := startNode(t, dirB, url)
	defer b.Kill(t)
	nodes := []*e2e.CrashServer{a, b}

	t.Run("duplicates", func(t *testing.T) { checkTwoNodeDuplicates(t, nodes, accounts, profiles) })
	t.Run("credits", func(t *testing.T) { checkTwoNodeCredits(t, nodes, accounts, profiles) })
	t.Run("signout", func(t *testing.T) { checkTwoNodeSignOut(t, nodes, accounts) })
	t.Run("delivery", func(t *testing.T) { checkTwoNodeDelivery(t, nodes, accounts, profiles) })
}

// startNode starts "companydocs serve --store url" on dir and waits until
// it listens.
func startNode(tb testing.TB, dir, url string) *e2e.CrashServer {
	tb.Helper()
	return e2e.StartCrashServer(tb, dir, "--store", url, "--store-pool-size", "8")
}

// createAnswer is what a create returned: the order's id for 201, the
// holder's for duplicate_order.
type createAnswer struct {
	status int
	code   string
	id     string
}

// createOnBoth sends n identical creates, alternating between the
// nodes, all at once.
func createOnBoth(t *testing.T, nodes []*e2e.CrashServer, token, body, idemKey string, n int) []createAnswer {
	t.Helper()
	answers := make([]createAnswer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			var out struct {
				ID    string `json:"id"`
				Error struct{ Code string }
				Order *struct{ ID string }
			}
			status := nodes[i%2].Post(t, "/api/v1/documents/orders", token, body, idemKey, &out)
			answers[i] = createAnswer{status: status, code: out.Error.Code, id: out.ID}
			if out.Order != nil {
				answers[i].id = out.Order.ID
			}
		})
	}
	close(start)
	wg.Wait()
	return answers
}

// checkOneOrder: exactly one 201, every other answer duplicate_order
// naming that order.
func checkOneOrder(t *testing.T, what string, answers []createAnswer) string {
	t.Helper()
	created := ""
	for _, a := range answers {
		if a.status == http.StatusCreated {
			if created != "" {
				t.Errorf("%s: two orders, %s and %s", what, created, a.id)
			}
			created = a.id
		}
	}
	if created == "" {
		t.Fatalf("%s: no order created: %+v", what, answers)
	}
	for _, a := range answers {
		if a.status != http.StatusCreated && (a.status != http.StatusConflict || a.code != companydocs.EDUPLICATEORDER || a.id != created) {
			t.Errorf("%s: answer %+v, want 409 duplicate_order naming %s", what, a, created)
		}
	}
	return created
}

func checkTwoNodeDuplicates(t *testing.T, nodes []*e2e.CrashServer, accounts *ordering.Accounts, profiles []string) {
	const sends = 16
	token := e2e.TwoNodeAccount(t, accounts, nodes[0], "dup", companydocs.RoleClient, 10)
	keyed := createOnBoth(t, nodes, token, e2e.OrderJSON(profiles[0], "AD", "subscription-basic"), "two-nodes-1", sends)
	checkOneOrder(t, "one Idempotency-Key", keyed)
	unkeyed := createOnBoth(t, nodes, token, e2e.OrderJSON(profiles[1], "AD", "subscription-basic"), "", sends)
	checkOneOrder(t, "no key, one open-order slot", unkeyed)
	a, err := accounts.Account("dup")
	if err != nil {
		t.Fatal(err)
	}
	if a.Credits != 8 {
		t.Errorf("balance after two orders of 1 credit: %d, want 8 (one debit each)", a.Credits)
	}
	t.Logf("%d identical creates on two nodes, with one key and without: one order and one debit each", sends)
}

func checkTwoNodeCredits(t *testing.T, nodes []*e2e.CrashServer, accounts *ordering.Accounts, profiles []string) {
	const n = 8
	if len(profiles) < 4*n {
		t.Fatalf("%d profiles, want %d", len(profiles), 4*n)
	}
	token := e2e.TwoNodeAccount(t, accounts, nodes[1], "quota", companydocs.RoleClient, n)
	lowest := make(chan int64, 1)
	stop := make(chan struct{})
	go func() { // the balance as the database has it, while the creates run
		low := int64(n)
		defer func() { lowest <- low }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if a, err := accounts.Account("quota"); err == nil {
				low = min(low, a.Credits)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	answers := make([]createAnswer, 4*n)
	var wg sync.WaitGroup
	for i := range 4 * n {
		wg.Go(func() {
			var out struct {
				ID    string `json:"id"`
				Error struct{ Code string }
			}
			status := nodes[i%2].Post(t, "/api/v1/documents/orders", token, e2e.OrderJSON(profiles[i], "CD", "subscription-basic"), "", &out)
			answers[i] = createAnswer{status: status, code: out.Error.Code, id: out.ID}
		})
	}
	wg.Wait()
	close(stop)
	low := <-lowest
	created, refused := 0, 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusCreated:
			created++
		case a.status == http.StatusPaymentRequired && a.code == companydocs.EINSUFFICIENTFUNDS:
			refused++
		default:
			t.Errorf("answer %+v, want 201 or 402 insufficient_funds", a)
		}
	}
	acct, err := accounts.Account("quota")
	if err != nil {
		t.Fatal(err)
	}
	if created != n || acct.Credits != 0 || low < 0 {
		t.Errorf("%d of %d creates made orders, balance %d (lowest seen %d); want %d, 0, never below 0", created, 4*n, acct.Credits, low, n)
	}
	t.Logf("%d concurrent creates on two nodes with credits for %d: %d orders, %d refused, balance %d", 4*n, n, created, refused, acct.Credits)
}

func checkTwoNodeSignOut(t *testing.T, nodes []*e2e.CrashServer, accounts *ordering.Accounts) {
	a, b := nodes[0], nodes[1]
	token := e2e.TwoNodeAccount(t, accounts, a, "leaver", companydocs.RoleClient, 0)
	for range 3 { // B reads the session, then answers it from its cache
		if status, body := b.Call(t, "GET", "/api/v1/documents/orders", "", token, "", ""); status != http.StatusOK {
			t.Fatalf("the session on node B: %d %s", status, body)
		}
	}
	if status, body := a.Call(t, "DELETE", "/api/v1/auth/sessions/current", "", token, "", ""); status != http.StatusNoContent && status != http.StatusOK {
		t.Fatalf("sign-out on node A: %d %s", status, body)
	}
	signedOut := time.Now()
	deadline := signedOut.Add(20 * time.Second) // a hang guard, not the bound
	polls := 0
	for {
		status, body := b.Call(t, "GET", "/api/v1/documents/orders", "", token, "", "")
		polls++
		if status == http.StatusUnauthorized {
			break
		}
		if status != http.StatusOK {
			t.Fatalf("node B after the sign-out: %d %s", status, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("node B still accepts the signed-out session after %v", time.Since(signedOut))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("a session signed out on node A was refused by node B after %v (%d polls; the bound is the session cache's %v)",
		time.Since(signedOut).Round(time.Millisecond), polls, ordering.SharedSessionCacheTTL)
}

func checkTwoNodeDelivery(t *testing.T, nodes []*e2e.CrashServer, accounts *ordering.Accounts, profiles []string) {
	a, b := nodes[0], nodes[1]
	client := e2e.TwoNodeAccount(t, accounts, a, "buyer", companydocs.RoleClient, 0)
	operator := e2e.TwoNodeAccount(t, accounts, b, "ops", companydocs.RoleOperator, 0)
	var order struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if status := a.Post(t, "/api/v1/documents/orders", client, e2e.OrderJSON(profiles[2], "AD", "ad-single"), "", &order); status != http.StatusCreated {
		t.Fatalf("create on node A: %d", status)
	}
	for _, action := range []string{"pay", "request"} {
		if status, body := b.Call(t, "POST", "/api/v1/operator/orders/"+order.ID+"/"+action, "application/json", operator, "", ""); status != http.StatusOK {
			t.Fatalf("%s on node B: %d %s", action, status, body)
		}
	}
	// The largest PDF accepted, through the pools within their default
	// statement timeout.
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("two nodes, one register printout\n"), ordering.MaxDocumentSize/33)...)
	pdf = append(pdf, bytes.Repeat([]byte{'\n'}, ordering.MaxDocumentSize-len(pdf))...)
	sum := sha256.Sum256(pdf)
	started := time.Now()
	status, body := b.Call(t, "PUT", "/api/v1/operator/orders/"+order.ID+"/document", "application/pdf", operator, string(pdf), "")
	upload := time.Since(started)
	if status != http.StatusOK {
		t.Fatalf("delivery on node B: %d %s", status, body)
	}
	var delivered struct {
		Status   string
		Document *companydocs.OrderDocument
	}
	if err := json.Unmarshal(body, &delivered); err != nil || delivered.Status != companydocs.OrderStatusDelivered || delivered.Document == nil || delivered.Document.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("delivery answer %s (%v)", body, err)
	}
	started = time.Now()
	status, got := a.Call(t, "GET", "/api/v1/documents/orders/"+order.ID+"/document", "", client, "", "")
	download := time.Since(started)
	if status != http.StatusOK || !bytes.Equal(got, pdf) {
		t.Fatalf("download from node A: %d, %d bytes (want %d, byte-identical)", status, len(got), len(pdf))
	}
	if files, _ := filepath.Glob(filepath.Join(b.DataDir(t), ordering.DocumentsDir, "*", "*.pdf")); len(files) != 0 {
		t.Errorf("node B wrote the PDF to its data directory too: %v", files)
	}
	t.Logf("order %s created on A, delivered through B (%d bytes, %v), downloaded from A byte-identical (%v)",
		order.ID, len(pdf), upload.Round(time.Millisecond), download.Round(time.Millisecond))
}
