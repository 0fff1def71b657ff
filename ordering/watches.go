package ordering

import (
	"context"
	"fmt"

	"companydocs"
)

// Watches keeps the accounts' watches of companies and compares them with
// each new index generation (CompareWatches, run by a Watcher), writing
// one company.changed event per change.
type Watches struct {
	*core
	// generation, when set, acquires the current index generation, so
	// that a new watch records the generation its profile was read from.
	generation func() (WatchGeneration, func())
	onWatches  func(delta int) // a watch created (+1) or stopped (-1)
	onBehind   func()          // a new watch committed behind the current generation
}

const watchIDPrefix = "wat_"

// WatchRecord is a stored watch: the watch as its account sees it and the
// profile as the account last heard of it. Comparing Snapshot with the
// profile of each new generation finds what changed, however many
// generations a node skipped; advancing Snapshot and Generation in the
// transaction that writes the event makes each change reported once.
type WatchRecord struct {
	companydocs.Watch
	Account  string               `json:"account"`
	Snapshot *companydocs.Profile `json:"snapshot"`
}

// WatchTx holds the watches: one per account and profile.
type WatchTx interface {
	// Watch returns the watch with the id, or nil. In Update it locks the
	// watch's row.
	Watch(id string) (*WatchRecord, error)
	// Watches returns up to limit watches of every account with ids above
	// after ("" for the first), in id order.
	Watches(after string, limit int) ([]WatchRecord, error)
	// AccountWatches returns the account's watches in id order.
	AccountWatches(account string) ([]WatchRecord, error)
	// ProfileWatch returns the id of the account's watch of the profile,
	// or "".
	ProfileWatch(account, profileID string) (string, error)
	// InsertWatch stores a new watch: ErrExists when its id is taken or
	// the account watches the profile already.
	InsertWatch(rec *WatchRecord) error
	// UpdateWatch replaces a stored watch: ErrNotFound when there is none.
	// Its account never changes; its profile changes when the watched
	// entry moved to another court (the caller has checked that the
	// account watches the new profile with no other watch).
	UpdateWatch(rec *WatchRecord) error
	// DeleteWatch removes a watch; an unknown id is not an error.
	DeleteWatch(id string) error
}

// WatchGeneration is an index generation as the watches see it: its name
// (names sort by creation time) and its profiles.
type WatchGeneration interface {
	ID() string
	Profile(id string) (*companydocs.Profile, error)
}

// WatchLimit is how many companies the account may watch: the highest
// watch_limit of the subscription plans it may use (a client may use
// every configured plan; an operator, who does not order, none).
func (s *Watches) WatchLimit(account string) (int, error) {
	role, err := s.roleOf(account)
	if err != nil || role != companydocs.RoleClient {
		return 0, err
	}
	return s.plans.WatchLimit(), nil
}

// CreateWatch watches a verified, orderable profile for the account. A
// profile the account watches already answers that watch (created is
// false); one whose watch ended (the profile had left the register data)
// is watched afresh.
func (s *Watches) CreateWatch(ctx context.Context, account, profileID string) (w *companydocs.Watch, created bool, err error) {
	if err := companydocs.CheckLength("company_profile_id", profileID, companydocs.MaxRequestField); err != nil {
		return nil, false, err
	}
	if err := s.requireRole(account, companydocs.RoleClient); err != nil {
		return nil, false, err
	}
	limit := s.plans.WatchLimit()
	profile, generation, err := s.watchedProfile(profileID)
	if err != nil {
		return nil, false, err
	}
	now := s.now().UTC()
	rec := WatchRecord{Account: account, Snapshot: profile, Watch: companydocs.Watch{ID: s.ids.nextWithPrefix(watchIDPrefix),
		CompanyProfileID: profile.ID, Company: companydocs.SnapshotOf(profile), CreatedAt: now, Generation: generation}}
	err = s.store.Update(ctx, func(tx Tx) error {
		w, created = nil, false
		existing, err := s.existingWatch(tx, account, profileID)
		if err != nil || existing != nil {
			w = existing
			return err
		}
		if err := checkWatchLimit(tx, account, limit); err != nil {
			return err
		}
		if err := tx.InsertWatch(&rec); err != nil {
			return fmt.Errorf("store watch: %w", err)
		}
		w, created = &rec.Watch, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if created && s.onWatches != nil {
		s.onWatches(1)
	}
	if created && s.onBehind != nil && s.currentGeneration() != generation {
		s.onBehind()
	}
	return w, created, nil
}

// currentGeneration names the generation being served ("" when unknown).
func (s *Watches) currentGeneration() string {
	if s.generation == nil {
		return ""
	}
	gen, release := s.generation()
	defer release()
	if gen == nil {
		return ""
	}
	return gen.ID()
}

// watchedProfile returns the profile a new watch starts from and the
// generation it was read from, or verified_company_required.
func (s *Watches) watchedProfile(id string) (*companydocs.Profile, string, error) {
	var p *companydocs.Profile
	var generation string
	var err error
	if s.generation != nil {
		gen, release := s.generation()
		if gen == nil {
			release()
			return nil, "", companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.shutting_down", nil)
		}
		p, err = gen.Profile(id)
		generation = gen.ID()
		release()
	} else {
		p, err = s.profiles.Profile(id)
	}
	if err != nil {
		return nil, "", err
	}
	if !p.OrderingEligible() {
		if p, generation, err = s.newerWatchedProfile(id, p, generation); err != nil {
			return nil, "", err
		}
	}
	if !p.OrderingEligible() {
		return nil, "", companydocs.Refusal(companydocs.EVERIFIEDREQUIRED, "refusal.watch_not_orderable", companydocs.Args{"profile": id})
	}
	return p, generation, nil
}

// newerWatchedProfile asks a newer generation than the served one about
// a profile the served one does not hold as orderable (GenerationProfiles;
// a look-up that cannot be made is an error to retry, never a refusal). A
// watch read from it records it, so that no comparison with the older
// generation reports the rollout as a change.
func (s *Watches) newerWatchedProfile(id string, served *companydocs.Profile, generation string) (*companydocs.Profile, string, error) {
	gp, ok := s.profiles.(GenerationProfiles)
	if !ok || s.generation == nil {
		return served, generation, nil
	}
	p, newer, err := gp.ProfileOf(id)
	if err != nil || newer == "" || !p.OrderingEligible() {
		return served, generation, err
	}
	return p, newer, nil
}

// existingWatch returns the account's live watch of the profile, or nil;
// an ended one is deleted, so that the profile is watched afresh.
func (s *Watches) existingWatch(tx Tx, account, profileID string) (*companydocs.Watch, error) {
	id, err := tx.ProfileWatch(account, profileID)
	if err != nil || id == "" {
		return nil, err
	}
	rec, err := tx.Watch(id)
	if err != nil || rec == nil {
		return nil, err
	}
	if !rec.Ended {
		return &rec.Watch, nil
	}
	return nil, tx.DeleteWatch(id)
}

// checkWatchLimit counts the account's live watches under its row lock,
// so that concurrent creates count one after the other.
func checkWatchLimit(tx Tx, account string, limit int) error {
	if _, err := getAccount(tx, account); err != nil {
		return err
	}
	if limit == 0 {
		return companydocs.Refusal(companydocs.EWATCHLIMIT, "refusal.watch_no_plan", nil)
	}
	n, err := countLive(tx, account)
	if err != nil {
		return err
	}
	if n >= limit {
		return companydocs.Refusal(companydocs.EWATCHLIMIT, "refusal.watch_limit", companydocs.Args{"count": n, "limit": limit})
	}
	return nil
}

func countLive(tx Tx, account string) (int, error) {
	list, err := tx.AccountWatches(account)
	n := 0
	for _, w := range list {
		if !w.Ended {
			n++
		}
	}
	return n, err
}

// Watches lists the account's watches, oldest first, each with its last
// change.
func (s *Watches) Watches(ctx context.Context, account string) ([]companydocs.Watch, error) {
	var list []WatchRecord
	err := s.store.View(ctx, func(tx Tx) (err error) {
		list, err = tx.AccountWatches(account)
		return err
	})
	out := make([]companydocs.Watch, 0, len(list))
	for _, rec := range list {
		out = append(out, rec.Watch)
	}
	return out, err
}

// WatchCount is how many live watches the account has and may have.
func (s *Watches) WatchCount(ctx context.Context, account string) (companydocs.WatchCount, error) {
	limit, err := s.WatchLimit(account)
	if err != nil {
		return companydocs.WatchCount{}, err
	}
	c := companydocs.WatchCount{Limit: limit}
	err = s.store.View(ctx, func(tx Tx) (err error) {
		c.Count, err = countLive(tx, account)
		return err
	})
	return c, err
}

// DeleteWatch stops the account's watch; another account's watch is
// not_found.
func (s *Watches) DeleteWatch(ctx context.Context, account, id string) error {
	if err := companydocs.CheckLength("id", id, companydocs.MaxRequestField); err != nil {
		return err
	}
	live := false
	err := s.store.Update(ctx, func(tx Tx) error {
		rec, err := tx.Watch(id)
		if err != nil {
			return err
		}
		if rec == nil || rec.Account != account {
			return companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_such_watch", companydocs.Args{"watch": id})
		}
		live = !rec.Ended
		return tx.DeleteWatch(id)
	})
	if err == nil && live && s.onWatches != nil {
		s.onWatches(-1)
	}
	return err
}

// CountWatches counts the live watches of every account (the gauge).
func (s *Watches) CountWatches(ctx context.Context) (int, error) {
	n := 0
	err := s.eachWatchPage(ctx, func(page []WatchRecord) error {
		for _, w := range page {
			if !w.Ended {
				n++
			}
		}
		return nil
	})
	return n, err
}

// watchPage is how many watches one transaction of a comparison takes.
const watchPage = 500

// eachWatchPage calls fn with every stored watch, a page per read
// transaction, in id order.
func (s *Watches) eachWatchPage(ctx context.Context, fn func([]WatchRecord) error) error {
	after := ""
	for {
		var page []WatchRecord
		err := s.store.View(ctx, func(tx Tx) (err error) {
			page, err = tx.Watches(after, watchPage)
			return err
		})
		if err != nil || len(page) == 0 {
			return err
		}
		if err := fn(page); err != nil {
			return err
		}
		after = page[len(page)-1].ID
	}
}
