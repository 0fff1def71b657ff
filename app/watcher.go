package app

import (
	"encoding/json"
	"errors"
	"log/slog"

	"companydocs"
	"companydocs/index"
	"companydocs/ordering"
)

// startWatcher starts the comparison of the watches with each generation
// the live index serves (ordering.Watcher), counted in the metrics; its
// events wake the webhook dispatcher.
func (m *Main) startWatcher() *ordering.Watcher {
	return m.Ordering.Watches.StartWatcher(ordering.WatcherHooks{
		Acquire: func() (ordering.WatchGeneration, ordering.ChangedProfiles, func()) {
			gen, release := m.Live.Acquire()
			if gen == nil {
				return nil, nil, release // closing
			}
			return gen, changesOf(gen, m.Logger), release
		},
		OnCommit: func(r ordering.WatchRun) {
			m.Metrics.ObserveWatchRun(r.Compared, r.Changes, r.Changed, r.Removed, r.Events)
		},
		OnCount:  m.Metrics.SetWatches,
		OnEvents: m.wakeDispatcher,
		Logger:   m.Logger,
	})
}

// changesOf returns the change record of gen, or nil when it has none
// (built before change records, with --no-changes, or damaged): the
// comparison then looks every watched profile up.
func changesOf(gen *index.Generation, logger *slog.Logger) ordering.ChangedProfiles {
	cs, err := gen.Changes()
	if err != nil {
		if !errors.Is(err, index.ErrNoChanges) {
			logger.Warn("the generation's change record cannot be read; every watched profile is looked up", "generation", gen.ID(), "err", err)
		}
		return nil
	}
	return changeRecord{cs}
}

// changeRecord is a generation's change record as the watches use it.
type changeRecord struct{ *index.ChangeSet }

// MovedTo returns the profile id a register change of the entry names,
// when it is another than the entry's own.
func (c changeRecord) MovedTo(id string) string {
	changes, ok, err := c.Lookup(id)
	if !ok || err != nil {
		return ""
	}
	for _, f := range changes {
		if f.Field != companydocs.FieldRegister {
			continue
		}
		raw, _ := json.Marshal(f.After)
		var after companydocs.RegisterValue
		if json.Unmarshal(raw, &after) == nil && after.ProfileID != id {
			return after.ProfileID
		}
	}
	return ""
}
