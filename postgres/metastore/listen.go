package metastore

import (
	"context"
	"time"

	"companydocs/publication"
)

// publicationChannel is the channel CompletePublication notifies with
// the name of the generation it makes live, and ListenPublications
// listens on.
const publicationChannel = "companydocs_publication"

// A lost listening connection is made again after listenRetryFirst, the
// wait doubling while connecting fails, up to listenRetryMax: a database
// that restarts is heard again within a second or two, one that stays
// down is asked twice a minute. Meanwhile nodes learn of publications at
// their follow interval.
const (
	listenRetryFirst = time.Second
	listenRetryMax   = 30 * time.Second
)

var _ publication.Listener = (*Store)(nil)

// ListenPublications calls published with the name of every generation
// made live, at once (LISTEN on a connection of its own), until ctx ends.
// Each time it starts listening, at first and after a lost connection,
// it calls published with the newest live generation too: one may have
// gone live unheard before. A lost connection is logged and made again,
// never given up.
func (s *Store) ListenPublications(ctx context.Context, published func(name string)) {
	retry := listenRetryFirst
	for {
		err := s.db.Listen(ctx, publicationChannel, func() {
			retry = listenRetryFirst
			s.reportNewestLive(ctx, published)
		}, published)
		if ctx.Err() != nil {
			return
		}
		s.logger.Warn("listening for publications failed; this node learns of them at its follow interval until it listens again",
			"retry_in", retry, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
		retry = min(2*retry, listenRetryMax)
	}
}

// reportNewestLive calls published with the newest live generation, if
// one is.
func (s *Store) reportNewestLive(ctx context.Context, published func(name string)) {
	p, err := s.NewestLive(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Warn("reading the newest publication once listening failed; this node learns of it at its follow interval", "err", err)
		}
		return
	}
	if p != nil {
		published(p.Name)
	}
}
