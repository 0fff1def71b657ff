#!/usr/bin/env bash
# Builds the S3-compatible object store the tests start on 127.0.0.1
# (internal/objectstoretest): SeaweedFS's weed, Apache-2.0, from the Go
# module proxy, once, into a cache outside the checkout:
#   ${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin/weed
# with weed.version beside it naming the version it was built from; a
# change of VERSION here rebuilds it. Prints the binary's path. The first
# build takes about 12 minutes on 2 cores (8.5 minutes of CPU); afterwards
# this returns at once.
# The project's go.mod is not touched: the module is built as its own main
# module (its replace directive rules out go install). A missing binary
# fails the tests, never skips them.
set -euo pipefail
VERSION=v0.0.0-20261109003541-7506e5f91cd6
GO="${GO:-go}"
. "$(dirname "$0")/toolcache.sh"
toolcache_open weed "$VERSION"
echo "building SeaweedFS $VERSION into $bin (about 12 minutes on 2 cores, once)" >&2
# Outside any module, so that neither go.mod nor go.sum of the checkout
# changes.
src=$(cd "$work" && GOFLAGS=-mod=mod "$GO" mod download -json "github.com/seaweedfs/seaweedfs@$VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -n $src && -d $src/weed ]] || { echo "SeaweedFS $VERSION: module source not found" >&2; exit 1; }
start=$SECONDS
(cd "$src" && GOFLAGS="-mod=readonly -buildvcs=false" "$GO" build -trimpath -o "$work/weed" ./weed)
echo "built in $((SECONDS - start)) s" >&2
toolcache_keep "$work/weed" "$VERSION"
