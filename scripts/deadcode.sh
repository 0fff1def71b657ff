#!/usr/bin/env bash
# Fails when deadcode finds a function that no command reaches, outside the
# benchmark commands (internal/bench, cmd/bench, cmd/corpusgen) and the test support
# packages (internal/realdata, internal/imprint ...), which only tests and
# benchmarks use.
set -euo pipefail
GO="${GO:-go}"
out=$("$GO" run golang.org/x/tools/cmd/deadcode@v0.52.0 \
	-filter '^companydocs($|/(app|cmd/companydocs|sheet|publication|postgres/metastore|data|httpapi|index|ingest|internal/boltfile|internal/filesum|objectstore|ordering|register|resolver|metrics|textfold|web|webhook)$)' ./...)
if [ -n "$out" ]; then
	echo "unreachable code (move test-only code into _test.go files, or delete it):"
	echo "$out"
	exit 1
fi
echo "deadcode: nothing unreachable"
