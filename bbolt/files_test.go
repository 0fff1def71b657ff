package bbolt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/testclock"
	"companydocs/ordering"
	"companydocs/storecopy"

	bolt "go.etcd.io/bbolt"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestSecondOpenIsInUse: one process per file; a second Open waits for
// the lock, then answers ErrInUse instead of hanging.
func TestSecondOpenIsInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), DatabaseFile)
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := Open(path, Options{OpenTimeout: 50 * time.Millisecond}); !errors.Is(err, ErrInUse) {
		t.Errorf("second open while held: %v, want ErrInUse", err)
	}
}

func TestSecretsAreStoredOnlyAsHashes(t *testing.T) {
	s := mustService(t, nil, nil, nil)
	key, err := s.CreateAccount("acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.db.Path()) // every commit is on disk already
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{key, sess.Token, key[len("cdk_"):], sess.Token[len("cds_"):]} {
		if strings.Contains(string(data), secret) {
			t.Errorf("database file holds the secret %q in clear", secret)
		}
	}
}

// TestOneKeyCannotGrowTheFile reproduces a file that grew without bound: one API key
// creating sessions without pause, none expiring. Before the cap the file
// doubled every few thousand sessions (256 KiB after 1,000, 2 MiB after
// 5,000); now it stays at its size after the first thousand.
func TestOneKeyCannotGrowTheFile(t *testing.T) {
	c := testclock.New()
	s := mustService(t, nil, nil, c.Now)
	key, _ := s.CreateAccount("acme", 0)
	var sizes []int64
	for i := range 5000 {
		c.Advance(time.Millisecond)
		if _, err := s.CreateSession(ctx, key); err != nil {
			t.Fatal(err)
		}
		if (i+1)%1000 == 0 {
			sizes = append(sizes, fileSize(t, s.db.Path()))
		}
	}
	t.Logf("file size after every 1,000 of 5,000 sessions: %v", sizes)
	if sizes[len(sizes)-1] > sizes[0] {
		t.Errorf("the file grew from %d to %d bytes", sizes[0], sizes[len(sizes)-1])
	}
}

// TestSweepKeepsTheFileFromGrowing creates sessions without pause for many
// accounts, one session per account per round, and moves the clock past the
// TTL after each round. With the sweep the file stops growing after the
// first rounds; without it, it grows round after round.
func TestSweepKeepsTheFileFromGrowing(t *testing.T) {
	const accounts, rounds, warmUp = 300, 20, 4
	swept := sessionLoad(t, accounts, rounds, true)
	unswept := sessionLoad(t, accounts, rounds, false)
	t.Logf("%d creations; file size by round, swept: %v", accounts*rounds, swept)
	t.Logf("file size by round, not swept: %v", unswept)
	if swept[rounds-1] > swept[warmUp-1] {
		t.Errorf("with the sweep the file grew from %d bytes after round %d to %d after round %d", swept[warmUp-1], warmUp, swept[rounds-1], rounds)
	}
	if unswept[rounds-1] <= 2*swept[rounds-1] {
		t.Errorf("without the sweep the file is %d bytes, with it %d: the load does not show what the sweep does", unswept[rounds-1], swept[rounds-1])
	}
}

// sessionLoad runs the load of TestSweepKeepsTheFileFromGrowing and returns
// the file size after each round. The sweep runs in batches as the
// service's sweeper does.
func sessionLoad(t *testing.T, accounts, rounds int, sweep bool) []int64 {
	c := testclock.New()
	s := mustService(t, nil, nil, c.Now)
	keys := make([]string, accounts)
	for i := range keys {
		var err error
		if keys[i], err = s.CreateAccount(fmt.Sprintf("client-%03d", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	var sizes []int64
	for range rounds {
		for _, k := range keys {
			if _, err := s.CreateSession(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		c.Advance(2 * ordering.DefaultSessionTTL)
		if sweep {
			if n := sweepAll(t, s.db, c.Now()); n != accounts {
				t.Fatalf("sweep deleted %d sessions, want %d", n, accounts)
			}
		}
		sizes = append(sizes, fileSize(t, s.db.Path()))
	}
	return sizes
}

func sweepAll(t *testing.T, db *DB, now time.Time) (deleted int) {
	from := ""
	for {
		err := db.Update(ctx, func(tx ordering.Tx) error {
			n, next, err := tx.SweepSessions(now, from, 500)
			deleted, from = deleted+n, next
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if from == "" {
			return deleted
		}
	}
}

// TestOldFileGetsIndexes opens a file written before the session, status
// and webhook due indexes existed: Open builds them in the transaction
// that creates the buckets, the check passes, and what they index works.
func TestOldFileGetsIndexes(t *testing.T) {
	fx := realFixture(t)
	path := filepath.Join(t.TempDir(), DatabaseFile)
	s, err := openService(path, fx.profiles, shippedPlans(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := s.CreateAccount("acme", 3)
	sess, err := s.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	hook, _ := s.CreateWebhook(ctx, "acme", "https://hooks.example/acme", "")
	if _, err := s.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "subscription-basic"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FanOutEvents(100); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dropBuckets(t, path, bucketAccountSessions, bucketOrderStatus, bucketWebhookDue)

	s, err = openService(path, fx.profiles, shippedPlans(t), nil)
	if err != nil {
		t.Fatalf("open the old file: %v", err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if acct, err := s.Authenticate(ctx, sess.Token); err != nil || acct != "acme" {
		t.Errorf("old session: %q, %v", acct, err)
	}
	err = s.db.View(ctx, func(tx ordering.Tx) error {
		n, _ := tx.CountSessions("acme")
		paid, _ := tx.QueuedOrders(companydocs.OrderStatusPaid, "", 10)
		due, _, err := tx.ClaimDueDeliveries(time.Now(), time.Minute, func(string) bool { return false }, 10)
		if n != 1 || len(paid) != 1 || len(due) != 1 || due[0].EndpointID != hook.ID {
			t.Errorf("rebuilt indexes: %d sessions, %d PAID orders, due %+v; want 1, 1 and the first of the order's events at %s", n, len(paid), due, hook.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dropBuckets deletes buckets of a closed file, as a file written before
// them lacks them.
func dropBuckets(t *testing.T, path string, names ...[]byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range names {
			if err := tx.DeleteBucket(name); err != nil {
				return fmt.Errorf("delete bucket %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEventAfterEmptiedOutbox runs, in one write transaction as a group
// commit may, a fan-out that takes every event of a multi-page outbox and
// a create that appends the next event. bbolt's Cursor.Last never returns
// on a bucket whose leaves the transaction emptied; the store must not use
// it there.
func TestEventAfterEmptiedOutbox(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), DatabaseFile), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	payload := []byte(`"` + strings.Repeat("x", 500) + `"`)
	var ids []string
	err = db.Update(ctx, func(tx ordering.Tx) error {
		ids = nil
		for i := range 200 { // enough for a branch page above the leaves
			e := ordering.Event{ID: fmt.Sprintf("evt_%026d", i), Payload: payload}
			if err := tx.AppendEvent(&e); err != nil {
				return err
			}
			ids = append(ids, e.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var last string
	go func() {
		done <- db.Update(ctx, func(tx ordering.Tx) error {
			for _, id := range ids {
				if err := tx.DeleteEvent(id); err != nil {
					return err
				}
			}
			var err error
			last, err = tx.EventIDFloor()
			return err
		})
	}()
	select {
	case err := <-done:
		if err != nil || last != ids[len(ids)-1] {
			t.Errorf("last event id after emptying the outbox: %q, %v; want %q (ids only move up)", last, err, ids[len(ids)-1])
		}
	case <-time.After(time.Minute): // a hang guard, not a timing check
		t.Fatal("EventIDFloor did not return on an outbox emptied in the same transaction")
	}
}

// TestOldFileMovesDeliveryBodies opens a file written when every
// delivery record carried its own copy of the signed body. Read-only, it
// is read as it is: it passes the check and copies into a new store with
// one body per event. Opened for writing, Open moves the bodies out of
// the records, one per event with a reference per delivery; the check
// passes and every attempt carries the bytes it carried before.
func TestOldFileMovesDeliveryBodies(t *testing.T) {
	fx := realFixture(t)
	path := filepath.Join(t.TempDir(), DatabaseFile)
	s, err := openService(path, fx.profiles, shippedPlans(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.CreateAccount("acme", 3)
	for i := range 3 {
		if _, err := s.CreateWebhook(ctx, "acme", fmt.Sprintf("https://hooks.example/%d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	o, err := s.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelOrder(ctx, "acme", o.ID, "<\u0000 \u2028 ä>"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FanOutEvents(100); err != nil {
		t.Fatal(err)
	}
	before := dueBodies(t, s.Webhooks)
	s.Close()
	inline := inlineBodies(t, path)

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Check(); err != nil {
		t.Errorf("check of the old file, read-only: %v", err)
	}
	copied, err := Open(filepath.Join(t.TempDir(), DatabaseFile), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := storecopy.Copy(ctx, ro, copied, nil); err != nil {
		t.Fatalf("copy of the old file: %v", err)
	}
	ro.Close()
	if err := copied.Check(); err != nil {
		t.Errorf("check of its copy: %v", err)
	}
	copied.Close()

	s, err = openService(path, fx.profiles, shippedPlans(t), nil)
	if err != nil {
		t.Fatalf("open the old file: %v", err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	after := dueBodies(t, s.Webhooks)
	if len(after) != len(before) {
		t.Fatalf("%d due attempts after the move, %d before", len(after), len(before))
	}
	for k, body := range before {
		if string(after[k]) != string(body) {
			t.Errorf("attempt %v carries %s after the move, %s before", k, after[k], body)
		}
	}
	err = s.db.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketWebhookBodies).Stats().KeyN; n != 2 || len(inline) != 2 {
			t.Errorf("%d bodies stored, want one per event (%d)", n, len(inline))
		}
		for id, body := range inline {
			if got := tx.Bucket(bucketWebhookBodies).Get([]byte(id)); !bytes.Equal(got, body) {
				t.Errorf("body of %s moved as %s, was %s", id, got, body)
			}
		}
		return tx.Bucket(bucketWebhookDeliveries).ForEach(func(k, v []byte) error {
			if strings.Contains(string(v), `"body"`) {
				t.Errorf("delivery %q still carries its body", k)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dueBodies returns the body of each endpoint's first due attempt.
func dueBodies(t *testing.T, s *ordering.Webhooks) map[[2]string][]byte {
	t.Helper()
	tasks, _, err := s.DueWebhooks(time.Now().Add(time.Hour), func(string) bool { return false }, 100)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("due attempts: %d, %v", len(tasks), err)
	}
	out := map[[2]string][]byte{}
	for _, tk := range tasks {
		out[[2]string{tk.EndpointID, tk.EventID}] = tk.Body
	}
	return out
}

// inlineBodies turns a closed file into the layout written before bodies
// were stored apart: each delivery record carries its event's body, and
// the body buckets do not exist. It returns the bodies by event id.
func inlineBodies(t *testing.T, path string) map[string][]byte {
	t.Helper()
	inline := map[string][]byte{}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		bodies, deliveries := tx.Bucket(bucketWebhookBodies), tx.Bucket(bucketWebhookDeliveries)
		var old []storedDelivery
		err := deliveries.ForEach(func(k, v []byte) error {
			d := storedDelivery{key: bytes.Clone(k)}
			if err := json.Unmarshal(v, &d.rec); err != nil {
				return err
			}
			d.rec.Body = bytes.Clone(bodies.Get([]byte(d.rec.EventID)))
			inline[d.rec.EventID] = d.rec.Body
			old = append(old, d)
			return nil
		})
		if err != nil {
			return err
		}
		for _, d := range old {
			if err := putJSON(deliveries, d.key, &d.rec); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket(bucketWebhookBodies); err != nil {
			return err
		}
		return tx.DeleteBucket(bucketWebhookBodyRefs)
	})
	if err != nil {
		t.Fatal(err)
	}
	return inline
}
