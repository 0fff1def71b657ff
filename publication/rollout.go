package publication

import (
	"context"
	"fmt"

	"companydocs"
	"companydocs/index"
	"companydocs/metrics"
)

// The ordering gate during a rollout. A node that follows published
// generations serves one and may be installing a newer one that other
// nodes serve already. Preview, order and watch creation ask one
// question: is the company orderable in the generation this node serves,
// or in the newest live one it installs? The installing generation is
// asked about every id whose answer could differ: every id the served
// generation does not hold as verified, active and with every orderable
// document. A generation that cannot install (damaged) takes part in no
// answer. A question the node cannot ask (the metastore does not answer,
// the newest generation's profile store is still downloading) is 503 with
// Retry-After, never a refusal.

// RolloutProfiles is the ordering gate's profile look-up on a node that
// follows (ordering.GenerationProfiles): Live is the served index,
// Follower the one installing.
type RolloutProfiles struct {
	Live     *index.Live
	Follower *Follower
}

// Profile returns the profile the gate judges id by.
func (r RolloutProfiles) Profile(id string) (*companydocs.Profile, error) {
	p, _, err := r.ProfileOf(id)
	return p, err
}

// ProfileOf returns the profile the gate judges id by and the generation
// it comes from when that is not the served one ("" for the served one).
func (r RolloutProfiles) ProfileOf(id string) (*companydocs.Profile, string, error) {
	served, err := r.Live.Profile(id)
	if err != nil {
		return nil, "", err
	}
	if settled(served) {
		return served, "", nil
	}
	return r.Follower.rolloutProfile(id, served)
}

// settled reports whether no newer generation can make p more orderable:
// verified, active and holding every orderable document.
func settled(p *companydocs.Profile) bool {
	if !p.OrderingEligible() {
		return false
	}
	for _, t := range companydocs.OrderableDocumentTypes {
		if !p.HasDocument(t) {
			return false
		}
	}
	return true
}

// orderability ranks a profile for the gate: not orderable, else by the
// documents it holds.
func orderability(p *companydocs.Profile) int {
	if !p.OrderingEligible() {
		return 0
	}
	n := 1
	for _, t := range companydocs.OrderableDocumentTypes {
		if p.HasDocument(t) {
			n++
		}
	}
	return n
}

// rolloutProfile asks the generation this node installs about id, which
// the served generation holds as served (nil when it lacks it).
func (f *Follower) rolloutProfile(id string, served *companydocs.Profile) (*companydocs.Profile, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gateLookupTimeout)
	defer cancel()
	newest, err := f.meta.NewestLive(ctx)
	if err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowMetastore)
		return nil, "", companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.generation_unknown", nil).WithRetryAfter(installRetryAfter)
	}
	serving := f.serving()
	if newest == nil || newest.Name <= serving {
		return served, "", nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	target := f.installTarget(newest.Name, serving)
	if target == "" {
		return served, "", nil
	}
	if f.pending != target || f.profiles == nil {
		f.WakeUp()
		return nil, "", companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.generation_installing",
			companydocs.Args{"generation": target}).WithRetryAfter(installRetryAfter)
	}
	newer, err := f.profiles.Profile(id)
	if err != nil {
		return nil, "", fmt.Errorf("look up %s in generation %s: %w", id, target, err)
	}
	if newer != nil && (served == nil || orderability(newer) >= orderability(served)) {
		return newer, target, nil
	}
	return served, "", nil
}

// installTarget is the generation the gate asks beside the served one:
// the newest live one unless it is damaged, else the one being installed
// if it is newer than the served one and not damaged ("" none); f.mu is
// held.
func (f *Follower) installTarget(newest, serving string) string {
	if !f.isDamaged(newest) {
		return newest
	}
	for _, name := range []string{f.pending, f.installing} {
		if name > serving && !f.isDamaged(name) {
			return name
		}
	}
	return ""
}
