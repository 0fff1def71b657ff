#!/usr/bin/env bash
# Installs stripe-mock, Stripe's own mock of its API (MIT), which the
# payment tests start on 127.0.0.1 (internal/stripemocktest), from the Go
# module proxy, once, into a cache outside the checkout:
#   ${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin/stripe-mock
# with stripe-mock.version beside it naming the version it was built
# from; a change of VERSION here installs it again. Prints the binary's
# path. The install takes about a minute on 2 cores; afterwards this
# returns at once. The project's go.mod is not touched (go install of a
# versioned path builds outside any module). The tests run this script
# themselves when the binary is missing.
set -euo pipefail
VERSION=v0.203.0
GO="${GO:-go}"
. "$(dirname "$0")/toolcache.sh"
toolcache_open stripe-mock "$VERSION"
echo "installing stripe-mock $VERSION into $bin (about a minute, once)" >&2
(cd "$work" && GOBIN="$work" GOFLAGS=-mod=mod "$GO" install "github.com/stripe/stripe-mock@$VERSION")
toolcache_keep "$work/stripe-mock" "$VERSION"
