package ordering

import (
	"fmt"
	"testing"
	"time"

	"companydocs"
)

// benchWatches is the size the service promises a swap handles within a
// minute: 100,000 watches, every watched profile changed.
const (
	benchWatches  = 100_000
	benchAccounts = 1_000
)

// BenchmarkCompareWatches100k compares 100,000 watches on bbolt (1,000
// accounts, each watching 100 of the 665 real fixture profiles, with one
// webhook endpoint each) with a generation that renames every profile,
// then fans the 100,000 events out to their endpoints' deliveries. It
// reports the comparison and the fan-out separately: "emitted" is the
// comparison (each event is in the outbox when its transaction commits),
// "fanned_out" the deliveries made ready for the dispatcher. Run it with
// make bench-watches.
func BenchmarkCompareWatches100k(b *testing.B) {
	fx := realFixture(b)
	profiles := watchableProfiles(fx)
	if len(profiles) < benchWatches/benchAccounts {
		b.Fatalf("%d orderable fixture profiles, want %d", len(profiles), benchWatches/benchAccounts)
	}
	genA := &fakeGeneration{id: "gen-20260101T000000.000Z-aaaaaa", profiles: fx.profiles}
	genB := &fakeGeneration{id: "gen-20260201T000000.000Z-bbbbbb", profiles: fakeProfiles{}}
	for id, p := range fx.profiles {
		cp := *p
		cp.Name += " i.L."
		genB.profiles[id] = &cp
	}
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		store, err := TestStores["bbolt"](dir)
		if err != nil {
			b.Fatal(err)
		}
		docs, err := TestDocuments["bbolt"](store, dir+"/documents")
		if err != nil {
			b.Fatal(err)
		}
		svc, err := New(store, fx.profiles, watchPlans(b, benchWatches), Options{Documents: docs})
		if err != nil {
			b.Fatal(err)
		}
		s := svc.Watches
		seedWatches(b, s, genA.ID(), profiles[:benchWatches/benchAccounts])
		b.StartTimer()
		start := time.Now()
		run, err := s.CompareWatches(ctx, genB, nil, nil)
		if err != nil || run.Events != benchWatches {
			b.Fatalf("compare: %+v, %v", run, err)
		}
		emitted := time.Since(start)
		fanned := 0
		for {
			n, err := svc.Webhooks.FanOutEvents(1000)
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
			fanned += n
		}
		total := time.Since(start)
		b.StopTimer()
		if fanned != benchWatches {
			b.Fatalf("fanned out %d events, want %d", fanned, benchWatches)
		}
		b.ReportMetric(emitted.Seconds(), "s_emitted")
		b.ReportMetric(total.Seconds(), "s_fanned_out")
		store.Close()
	}
}

// watchableProfiles are the fixture's orderable profiles.
func watchableProfiles(fx *fixture) []*companydocs.Profile {
	var out []*companydocs.Profile
	for _, p := range fx.profiles {
		if p.OrderingEligible() {
			out = append(out, p)
		}
	}
	return out
}

// seedWatches stores benchAccounts accounts, each with a webhook endpoint
// and a watch of every profile, straight through the store, 5,000 a
// transaction.
func seedWatches(b *testing.B, s *Watches, gen string, profiles []*companydocs.Profile) {
	b.Helper()
	now := time.Now().UTC()
	for a := range benchAccounts {
		account := fmt.Sprintf("bench-%04d", a)
		err := s.store.Update(ctx, func(tx Tx) error {
			if err := tx.CreateAccount(&AccountRecord{Account: Account{Name: account, CreatedAt: now}, KeyHash: []byte(account)}); err != nil {
				return err
			}
			ep := EndpointRecord{Account: account, WebhookEndpoint: companydocs.WebhookEndpoint{ID: fmt.Sprintf("wh_%04d", a),
				URL: "https://example.com/hook", CreatedAt: now, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
			if err := tx.InsertWebhookEndpoint(&ep); err != nil {
				return err
			}
			for _, p := range profiles {
				rec := WatchRecord{Account: account, Snapshot: p, Watch: companydocs.Watch{ID: s.ids.nextWithPrefix(watchIDPrefix),
					CompanyProfileID: p.ID, Company: companydocs.SnapshotOf(p), CreatedAt: now, Generation: gen}}
				if err := tx.InsertWatch(&rec); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
