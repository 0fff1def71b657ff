#!/usr/bin/env bash
# Builds the Debian package of a companydocs binary with nfpm, from the
# files in deploy/debian/ (nfpm.yaml says what goes where):
#   scripts/deb.sh BINARY OUTDIR
# writes OUTDIR/companydocs_VERSION_ARCH.deb and prints its path.
# make deb runs it on make build's binary. nfpm is installed once from the
# Go module proxy into the cache beside the test tools (scripts/nfpm.sh);
# go.mod is not touched.
#
# The version is 0.0~gitDATE.COMMIT from the commit checked out (the
# repository has no release tags), +modified when tracked files differ
# from it; DEB_VERSION replaces it. Every file's time is the commit's
# (SOURCE_DATE_EPOCH), so the same commit and binary give the same
# package, byte for byte. The libc6 dependency is read from the binary:
# the newest GLIBC_ symbol version it needs (as dpkg-shlibdeps says), none
# for a static binary (CGO_ENABLED=0).
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:?usage: scripts/deb.sh BINARY OUTDIR}
outdir=${2:?usage: scripts/deb.sh BINARY OUTDIR}
nfpm=$(scripts/nfpm.sh)

commit_time=$(git log -1 --format=%ct)
if [[ -z ${DEB_VERSION:-} ]]; then
	DEB_VERSION="0.0~git$(date -u -d "@$commit_time" +%Y%m%d%H%M%S).$(git rev-parse --short=12 HEAD)"
	if ! git diff --quiet HEAD --; then
		DEB_VERSION+="+modified"
	fi
fi
export DEB_VERSION
export DEB_MAINTAINER=${DEB_MAINTAINER:-companydocs maintainers <maintainers@companydocs.example>}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$commit_time}

GO=${GO:-go}
goarch=$($GO env GOARCH)
case $goarch in
amd64 | arm64 | riscv64 | s390x | ppc64le) DEB_ARCH=$goarch ;;
386) DEB_ARCH=i386 ;;
arm) DEB_ARCH=armhf ;;
*) echo "deb.sh: no Debian architecture for GOARCH $goarch" >&2 && exit 1 ;;
esac
export DEB_ARCH

glibc=$(readelf --version-info "$binary" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
export DEB_DEPENDS_LIBC=${glibc:+libc6 (>= $glibc)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp deploy/debian/* "$work/"
# Stripped as dh_strip strips, of its debug information and symbol
# table: Go's runtime keeps its own tables for stack traces and profiles,
# and "go version -m" still reads the build information.
cp "$binary" "$work/companydocs"
strip --remove-section=.comment --remove-section=.note "$work/companydocs"
cp docs/operations.md "$work/operations.md"
cat >"$work/changelog.yml" <<EOF
- semver: "$DEB_VERSION-1"
  date: $(date -u -d "@$commit_time" +%Y-%m-%dT%H:%M:%SZ)
  packager: "$DEB_MAINTAINER"
  deb:
    urgency: medium
    distributions: [unstable]
  changes:
    - commit: $(git rev-parse HEAD)
      note: "Built from commit $(git rev-parse --short=12 HEAD) of companydocs."
EOF
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
deb="$outdir/companydocs_${DEB_VERSION}-1_${DEB_ARCH}.deb"
(cd "$work" && "$nfpm" package --config nfpm.yaml --packager deb --target "$deb" >&2)
echo "$deb"
