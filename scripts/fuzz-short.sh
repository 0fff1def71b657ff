#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME (default 10s) each.
# The seed corpora (f.Add and testdata/fuzz) also run in every plain
# "go test"; this explores beyond them. A failing input is written to the
# package's testdata/fuzz/<Target>/ and becomes a regression case.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
total=0
for pkg in $($GO list ./...); do
	dir=$($GO list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "== $pkg $target ($FUZZTIME)"
		log=$(mktemp)
		if ! $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log" | tail -3; then
			cat "$log"
			rm -f "$log"
			exit 1
		fi
		n=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}' || true)
		total=$((total + ${n:-0}))
		rm -f "$log"
	done
done
echo "fuzz-short: $total executions in all"
