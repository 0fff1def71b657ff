#!/usr/bin/env bash
# Installs nfpm, the packager make deb builds the Debian package with
# (scripts/deb.sh), from the Go module proxy, once, into the cache beside
# the test tools:
#   ${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin/nfpm
# with nfpm.version beside it naming the version it was built from; a
# change of VERSION here installs it again. Prints the binary's path. The
# install takes about a minute on 2 cores; afterwards this returns at
# once. The project's go.mod is not touched (go install of a versioned
# path builds outside any module).
set -euo pipefail
VERSION=v2.45.2
GO="${GO:-go}"
. "$(dirname "$0")/toolcache.sh"
toolcache_open nfpm "$VERSION"
echo "installing nfpm $VERSION into $bin (about a minute, once)" >&2
(cd "$work" && GOBIN="$work" GOFLAGS=-mod=mod "$GO" install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$VERSION")
toolcache_keep "$work/nfpm" "$VERSION"
