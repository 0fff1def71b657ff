#!/usr/bin/env bash
# Prints the path of promtool, Prometheus's rule checker, which make
# test-alerts runs on deploy/prometheus/: the one on PATH, else the one
# taken once from Debian's prometheus package into the cache beside the
# test tools:
#   ${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin/promtool
# The package is downloaded with apt-get and only promtool is unpacked
# from it: installing it would start a Prometheus server on the machine.
# Needs apt-get (Debian or Ubuntu) the first time; a missing promtool
# fails the test, never skips it.
set -euo pipefail
if command -v promtool >/dev/null; then
	command -v promtool
	exit 0
fi
. "$(dirname "$0")/toolcache.sh"
toolcache_open promtool debian-prometheus
echo "promtool not found: taking it from Debian's prometheus package into $bin" >&2
if ! (cd "$work" && apt-get download prometheus >/dev/null 2>&1); then
	apt-get update -qq
	(cd "$work" && apt-get download prometheus >/dev/null 2>&1)
fi
dpkg-deb --fsys-tarfile "$work"/prometheus_*.deb | tar -x -C "$work" ./usr/bin/promtool
toolcache_keep "$work/usr/bin/promtool" debian-prometheus
