#!/usr/bin/env bash
# Installs the PostgreSQL server binaries the tests and the benchmark run
# their throw-away clusters with (internal/pgcluster), unless initdb is
# already found where internal/pgcluster looks. Needs root (apt-get) on a
# machine without them; a missing PostgreSQL fails the tests, never skips.
set -euo pipefail
for d in /usr/lib/postgresql/15/bin /usr/local/bin /usr/local/pgsql/bin /usr/lib/postgresql/16/bin /usr/lib/postgresql/17/bin; do
	[[ -x $d/initdb ]] && exit 0
done
echo "PostgreSQL server binaries not found: installing postgresql-15 with apt-get" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 postgresql-contrib-15 >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
