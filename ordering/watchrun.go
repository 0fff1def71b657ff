package ordering

import (
	"context"
	"encoding/json"
	"fmt"

	"companydocs"
	"companydocs/register"
)

// WatchRun is what comparing the watches with one generation did.
type WatchRun struct {
	Generation string
	// Compared counts the watches compared with the generation by this
	// run (a watch another node or an earlier run compared is skipped).
	Compared int
	// Changes counts the changed fields found, Changed the watches with
	// at least one but whose profile is still held, Removed (ended) the
	// watches whose profile is gone.
	Changes, Changed, Removed int
	// Events counts the events written, one per changed or removed watch.
	Events int
}

func (r *WatchRun) add(o WatchRun) {
	r.Compared += o.Compared
	r.Changes += o.Changes
	r.Changed += o.Changed
	r.Removed += o.Removed
	r.Events += o.Events
}

// ChangedProfiles is what a generation may know of its own changes: the
// generation it was compared with at ingest, whether a profile differs
// from that generation's, and the profile a register entry moved to
// (another court gives another profile id). Watches last compared with
// previous need a look-up only for the profiles changed reports; a
// watched profile that moved is followed to its new id.
type ChangedProfiles interface {
	Previous() string
	Changed(profileID string) bool
	// MovedTo returns the id of the profile the entry moved to, or "".
	MovedTo(profileID string) string
}

// CompareWatches compares every live watch not yet compared with gen
// (whose generation sorts before gen's name) with gen's profile: a
// changed profile writes a company.changed event; a profile gen lacks
// writes one whose change is FieldRemoved, and ends the watch. A page of
// watches commits in one transaction, each watch's event with its new
// snapshot and generation, re-read under the watch's row lock: a watch
// compared with gen once, by this node or another on the same store, is
// skipped, so a change is reported once however often and on
// however many nodes the generation is swapped in, and a run cut short
// (a crash) is finished by the next. changed, when not nil, spares the
// look-up of the profiles it says are unchanged. committed, when not
// nil, is called after each transaction with what it did, so that the
// events of a long comparison go out while it runs.
func (s *Watches) CompareWatches(ctx context.Context, gen WatchGeneration, changed ChangedProfiles, committed func(WatchRun)) (WatchRun, error) {
	run := WatchRun{Generation: gen.ID()}
	err := s.eachWatchPage(ctx, func(page []WatchRecord) error {
		due := dueWatches(page, gen.ID())
		if len(due) == 0 {
			return nil
		}
		profiles, err := lookUpWatched(gen, due, changed)
		if err != nil {
			return err
		}
		var r WatchRun
		err = s.store.Update(ctx, func(tx Tx) error {
			r = WatchRun{Generation: gen.ID()}
			for _, w := range due {
				if err := s.compareWatch(tx, w.ID, gen, profiles, &r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		run.add(r)
		if committed != nil {
			committed(r)
		}
		return nil
	})
	return run, err
}

// dueWatches picks the live watches of a page not compared with the
// generation named gen or a later one.
func dueWatches(page []WatchRecord, gen string) []WatchRecord {
	var due []WatchRecord
	for _, w := range page {
		if !w.Ended && w.Generation < gen {
			due = append(due, w)
		}
	}
	return due
}

// watchedProfile is a profile of the new generation as a comparison
// needs it: the profile (nil when the generation lacks it), or unchanged
// when the generation's own change list says it did not change since the
// watch's generation.
type watchedProfile struct {
	profile   *companydocs.Profile
	unchanged string // the generation since which the profile is known unchanged
	moved     bool   // profile is the one the watched entry moved to
}

// lookUpWatched reads the new profiles of the due watches, outside the
// write transaction.
func lookUpWatched(gen WatchGeneration, due []WatchRecord, changed ChangedProfiles) (map[string]watchedProfile, error) {
	out := make(map[string]watchedProfile, len(due))
	for _, w := range due {
		id := w.CompanyProfileID
		known, ok := out[id]
		unchanged := changed != nil && w.Generation != "" && w.Generation == changed.Previous() && !changed.Changed(id)
		if ok && (known.unchanged == "" || unchanged) {
			continue // looked up already (a profile serves every watch), or known unchanged for this one too
		}
		if unchanged {
			out[id] = watchedProfile{unchanged: w.Generation}
			continue
		}
		p, err := gen.Profile(id)
		if err != nil {
			return nil, fmt.Errorf("read profile %s of generation %s: %w", id, gen.ID(), err)
		}
		wp := watchedProfile{profile: p}
		if p == nil {
			if wp.profile, err = successorOf(gen, w.Snapshot, changed); err != nil {
				return nil, err
			}
			wp.moved = wp.profile != nil
		}
		out[id] = wp
	}
	return out, nil
}

// numberLookup is what a generation offers to find a register entry by
// its number (index.Generation does).
type numberLookup interface {
	ByNumber(t register.Type, number string) ([]*companydocs.Profile, error)
}

// successorOf returns the profile a watched entry the generation no
// longer holds moved to, or nil: the one the generation's change record
// names, or else (a generation compared with another than the watch's)
// the one profile of the generation with the entry's register type,
// number and suffix that names the entry's court as its former court or
// has its name, the way the register records a move to another court.
func successorOf(gen WatchGeneration, before *companydocs.Profile, changed ChangedProfiles) (*companydocs.Profile, error) {
	if before == nil {
		return nil, nil
	}
	if changed != nil {
		if to := changed.MovedTo(before.ID); to != "" {
			p, err := gen.Profile(to)
			if err != nil {
				return nil, fmt.Errorf("read profile %s of generation %s: %w", to, gen.ID(), err)
			}
			return p, nil
		}
	}
	byNumber, ok := gen.(numberLookup)
	if !ok {
		return nil, nil
	}
	candidates, err := byNumber.ByNumber(before.Ref.Type, before.Ref.Number)
	if err != nil {
		return nil, fmt.Errorf("look up %s %s in generation %s: %w", before.Ref.Type, before.Ref.Number, gen.ID(), err)
	}
	var found *companydocs.Profile
	for _, p := range candidates {
		moved := p.Ref.Suffix == before.Ref.Suffix && p.Ref.Court != before.Ref.Court &&
			(p.Ref.FormerCourt == before.Ref.Court || p.Name == before.Name)
		if moved && p.ID != before.ID {
			if found != nil {
				return nil, nil // two candidates: no telling which
			}
			found = p
		}
	}
	return found, nil
}

// compareWatch compares one watch, read again under its row lock, with
// the generation and writes its event and new state.
func (s *Watches) compareWatch(tx Tx, id string, gen WatchGeneration, profiles map[string]watchedProfile, r *WatchRun) error {
	rec, err := tx.Watch(id)
	if err != nil || rec == nil || rec.Ended || rec.Generation >= gen.ID() {
		return err // deleted, ended or compared meanwhile
	}
	r.Compared++
	wp := profiles[rec.CompanyProfileID]
	if wp.unchanged != "" && wp.unchanged != rec.Generation {
		// Another node compared it with another generation meanwhile:
		// the change record does not speak for it, the profile does.
		one, err := lookUpWatched(gen, []WatchRecord{*rec}, nil)
		if err != nil {
			return err
		}
		wp = one[rec.CompanyProfileID]
	}
	watchedID := rec.CompanyProfileID
	if err := followMove(tx, rec, wp); err != nil {
		return err
	}
	change := s.changeOf(rec, gen.ID(), wp)
	if change != nil {
		change.CompanyProfileID = watchedID
		if err := s.writeWatchEvent(tx, rec, change); err != nil {
			return err
		}
		rec.LastChange = change
		r.Events++
		r.Changes += len(change.Changes)
		if change.WatchEnded {
			r.Removed++
		} else {
			r.Changed++
		}
	}
	rec.Generation = gen.ID()
	if err := tx.UpdateWatch(rec); err != nil {
		return fmt.Errorf("store watch %s: %w", id, err)
	}
	return nil
}

// followMove makes a watch of an entry that moved to another court watch
// the entry's new profile, unless the account watches that one already:
// then the watch ends with the move.
func followMove(tx Tx, rec *WatchRecord, wp watchedProfile) error {
	if !wp.moved {
		return nil
	}
	other, err := tx.ProfileWatch(rec.Account, wp.profile.ID)
	if err != nil {
		return err
	}
	if other != "" {
		rec.Ended = true
		return nil
	}
	rec.CompanyProfileID = wp.profile.ID
	return nil
}

// changeOf returns what the generation changed in the watched profile,
// or nil, and moves rec's snapshot to the generation's profile; a
// profile the generation lacks ends the watch.
func (s *Watches) changeOf(rec *WatchRecord, gen string, wp watchedProfile) *companydocs.WatchChange {
	if wp.unchanged != "" {
		return nil
	}
	changes := companydocs.ProfileChanges(rec.Snapshot, wp.profile)
	if wp.profile != nil && !rec.Ended {
		rec.Snapshot = wp.profile
		rec.Company = companydocs.SnapshotOf(wp.profile)
	} else {
		rec.Ended = true
	}
	if len(changes) == 0 {
		return nil
	}
	return &companydocs.WatchChange{WatchID: rec.ID,
		GenerationBefore: rec.Generation, GenerationAfter: gen, At: s.now().UTC(), Changes: changes, WatchEnded: rec.Ended}
}

// writeWatchEvent appends the change's event to the outbox, for the
// watching account's webhook endpoints.
func (s *Watches) writeWatchEvent(tx Tx, rec *WatchRecord, change *companydocs.WatchChange) error {
	floor, err := tx.EventIDFloor()
	if err != nil {
		return err
	}
	id := s.eventIDs.nextWithPrefix(eventIDPrefix)
	if floor != "" && id <= floor {
		id = idAfter(floor)
	}
	payload, err := json.Marshal(change)
	if err != nil {
		return fmt.Errorf("encode event payload of watch %s: %w", rec.ID, err)
	}
	e := Event{ID: id, Type: companydocs.EventCompanyChanged, Account: rec.Account, At: change.At, Payload: payload}
	if err := tx.AppendEvent(&e); err != nil {
		return fmt.Errorf("store event %s: %w", id, err)
	}
	return nil
}
