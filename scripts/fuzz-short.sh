#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME (default 10s) each.
# The seed corpora (f.Add and testdata/fuzz) also run in every plain
# "go test"; this explores beyond them. A failing input is written to the
# package's testdata/fuzz/<Target>/ and becomes a regression case.
#
# Go 1.26's fuzz coordinator can fail a duration-bounded run with a bare
# "context deadline exceeded" at the end of -fuzztime although no input
# failed (golang/go#75804, fixed in Go 1.27). When a run fails with only
# that message and wrote no reproducer, the target is run once more,
# bounded by the number of executions the first run reached instead of a
# clock, which has no deadline to race; any failure of that run fails.
#
# Each package's test binary is built once, instrumented for fuzzing as
# "go test -fuzz" builds it, and run for each of its targets the way
# "go test -fuzz" runs it: in the package's directory (its testdata/fuzz
# seeds, and a failing input written there) with the go command's corpus
# cache of the package. Linking one binary per target cost about as much
# as the fuzzing itself.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
cache=$($GO env GOCACHE)/fuzz
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
total=0

# fuzz runs one target of the package's binary $bin with a -fuzztime; its
# whole output is left in $log.
fuzz() {
	local pkg=$1 target=$2 limit=$3
	(cd "$dir" && "$bin" -test.paniconexit0 -test.timeout=10m0s -test.run='^$' -test.fuzz="^${target}\$" \
		-test.fuzztime="$limit" -test.fuzzcachedir="$cache/$pkg") >"$log" 2>&1
}

execs() {
	grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}' || true
}

reproducers() {
	local corpus=$1/testdata/fuzz/$2
	if [ -d "$corpus" ]; then find "$corpus" -type f | wc -l; else echo 0; fi
}

# coordinatorRace tells the toolchain's deadline race from a real failure:
# the only failure line is the bare deadline and no reproducer was written.
coordinatorRace() {
	local dir=$1 target=$2 before=$3
	grep -q '^    context deadline exceeded$' "$log" &&
		! grep -q 'Failing input written to' "$log" &&
		[ "$(reproducers "$dir" "$target")" = "$before" ]
}

for pkg in $($GO list ./...); do
	dir=$($GO list -f '{{.Dir}}' "$pkg")
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
	[ -n "$targets" ] || continue
	bin=$bindir/$(basename "$dir").test
	$GO test -c -fuzz . -o "$bin" "$pkg"
	for target in $targets; do
		echo "== $pkg $target ($FUZZTIME)"
		log=$(mktemp)
		before=$(reproducers "$dir" "$target")
		if ! fuzz "$pkg" "$target" "$FUZZTIME"; then
			if ! coordinatorRace "$dir" "$target" "$before"; then
				cat "$log"
				rm -f "$log"
				exit 1
			fi
			n=$(execs)
			n=${n:-1000}
			[ "$n" -ge 1000 ] || n=1000
			echo "   deadline race of the Go fuzz coordinator (golang/go#75804), no failing input: again for ${n} executions"
			if ! fuzz "$pkg" "$target" "${n}x"; then
				cat "$log"
				rm -f "$log"
				exit 1
			fi
		fi
		tail -3 "$log"
		n=$(execs)
		total=$((total + ${n:-0}))
		rm -f "$log"
	done
done
echo "fuzz-short: $total executions in all"
