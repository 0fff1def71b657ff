#!/usr/bin/env bash
# National-scale benchmark of companydocs (see BENCHMARKS.md).
#
#   scripts/bench.sh STEP...   steps: build corpus queries ingest floor search orders orders-pg sample pg profile costs changes incremental generations pgo follow all
#
# Environment: DATA (shared data, default ../shared/data), BENCH_DIR (work
# directory, default var/bench), BENCH_SCALES (default "1.2m 5m"), SEED
# (default 1), RUNS (default 3), NODES (orders-pg: node counts, default
# "1 2"), POOL (orders-pg: --store-pool-size, default 0), FOLLOW_INTERVAL
# (follow: the nodes' --follow-interval, default 10s). BENCH_SCALES=sample with the step
# "sample" measures on the embedded sample instead (minutes, not hours). Every server it starts listens on
# 127.0.0.1 only; every load run is bounded by a request count and a
# duration. Results go to $BENCH_DIR/results/ as JSON and Markdown.
set -euo pipefail

DATA=${DATA:-../shared/data}
# The index benchmarks read more of chunk 13 than the repository keeps.
export COMPANYDOCS_NATIONAL_DATA
COMPANYDOCS_NATIONAL_DATA=$(realpath -m "$DATA")
OUT=${BENCH_DIR:-var/bench}
SCALES=${BENCH_SCALES:-1.2m 5m}
SEED=${SEED:-1}
RUNS=${RUNS:-3}
NODES=${NODES:-1 2}
POOL=${POOL:-0}
FOLLOW_INTERVAL=${FOLLOW_INTERVAL:-10s}
RES=$OUT/results
REAL=("$DATA"/offeneregister/ocdata.chunk*.jsonl.bz2)
GLEIF=("$DATA/gleif/lei_records_de_goldencopy.csv" "$DATA/gleif/lei_records_api.jsonl")
SYNTH=$OUT/synthetic-5m-seed$SEED.jsonl.gz
BIN=$OUT/companydocs
BENCH=$OUT/bench

mkdir -p "$OUT" "$RES"

corpus_for() { # scale -> dump files
	case $1 in
	1.2m) echo "${REAL[@]}" ;;
	5m) echo "${REAL[@]} $SYNTH" ;;
	sample) echo "data/sample.jsonl.bz2" ;;
	*) echo "unknown scale $1" >&2; exit 2 ;;
	esac
}

record() { # name command... : run, keep the Markdown output
	local name=$1; shift
	{ echo "\$ $*"; date -u; } >"$RES/$name.md"
	"$@" | tee -a "$RES/$name.md"
}

# The server and the in-process benchmarks are built as make build builds
# the server: optimised by the search profile PGO (step pgo records it).
PGO=${PGO:-cmd/companydocs/search.pgo}

step_build() {
	go build -pgo="$PGO" -o "$BIN" ./cmd/companydocs
	go build -pgo="$PGO" -o "$BENCH" ./cmd/bench
	go build -o "$OUT/corpusgen" ./cmd/corpusgen
}

step_corpus() {
	[[ -s $SYNTH ]] && return
	record corpusgen /usr/bin/time -v "$OUT/corpusgen" -seed "$SEED" -total 5000000 -names "$DATA/names" -o "$SYNTH.tmp.gz" "${REAL[@]}" 2>&1
	mv "$SYNTH.tmp.gz" "$SYNTH"
}

step_queries() {
	for s in $SCALES; do
		[[ -s $OUT/queries-$s.jsonl ]] && continue
		# shellcheck disable=SC2046
		record "queries-$s" "$BENCH" queries -seed "$SEED" -per-kind 300 -orderable 2000 \
			-gleif "${GLEIF[0]}" -gleif "${GLEIF[1]}" -o "$OUT/queries-$s.jsonl" -profiles "$OUT/profiles-$s.txt" $(corpus_for "$s")
	done
}

step_ingest() {
	for s in $SCALES; do
		rm -rf "$OUT/data-$s"
		# shellcheck disable=SC2046
		record "ingest-$s" "$BENCH" ingest -bin "$BIN" -data-dir "$OUT/data-$s" -json "$RES/ingest-$s.json" $(corpus_for "$s") "${GLEIF[@]}"
	done
}

need_index() {
	[[ -f $OUT/data-$1/index/CURRENT ]] || { echo "no index for $1 in $OUT/data-$1: run 'make bench-ingest' first" >&2; exit 1; }
}

step_search() {
	for s in $SCALES; do
		need_index "$s"
		record "search-$s" "$BENCH" search -bin "$BIN" -data-dir "$OUT/data-$s" -queries "$OUT/queries-$s.jsonl" \
			-runs "$RUNS" -clients 1,4,16 -requests 3000 -kind-requests 600 -duration 60s -json "$RES/search-$s.json"
	done
}

step_orders() {
	for s in $SCALES; do
		need_index "$s"
		record "orders-$s" "$BENCH" orders -bin "$BIN" -data-dir "$OUT/data-$s" -profiles "$OUT/profiles-$s.txt" \
			-runs "$RUNS" -clients 32 -requests 6000 -duration 60s -json "$RES/orders-$s.json"
		record "lifecycle-$s" "$BENCH" lifecycle -bin "$BIN" -data-dir "$OUT/data-$s" -profiles "$OUT/profiles-$s.txt" \
			-runs "$RUNS" -clients 32 -lifecycles 3000 -pdf-size 204800 -duration 60s -json "$RES/lifecycle-$s.json"
	done
}

# The same order benchmarks with the PostgreSQL store, on one node and on
# two nodes sharing the database (clients spread over both).
step_orders-pg() {
	ensure_postgres
	for s in $SCALES; do
		need_index "$s"
		for n in $NODES; do
			record "orders-pg$n-$s" "$BENCH" orders -store postgres -nodes "$n" -pool-size "$POOL" -bin "$BIN" -data-dir "$OUT/data-$s" \
				-profiles "$OUT/profiles-$s.txt" -runs "$RUNS" -clients 32 -requests 6000 -duration 60s -json "$RES/orders-pg$n-$s.json"
			record "lifecycle-pg$n-$s" "$BENCH" lifecycle -store postgres -nodes "$n" -pool-size "$POOL" -bin "$BIN" -data-dir "$OUT/data-$s" \
				-profiles "$OUT/profiles-$s.txt" -runs "$RUNS" -clients 32 -lifecycles 3000 -pdf-size 204800 -duration 60s -json "$RES/lifecycle-pg$n-$s.json"
		done
	done
}

# The embedded sample as a data directory and its orderable profiles, for
# the order benchmarks without the national corpus.
step_sample() {
	[[ -f $OUT/data-sample/index/CURRENT ]] || "$BIN" ingest --data-dir "$OUT/data-sample" data/sample.jsonl.bz2 data/lei_sample.csv
	[[ -s $OUT/profiles-sample.txt ]] || record queries-sample "$BENCH" queries -seed "$SEED" -per-kind 50 -orderable 2000 \
		-o "$OUT/queries-sample.jsonl" -profiles "$OUT/profiles-sample.txt" data/sample.jsonl.bz2
}

ensure_postgres() {
	"$(dirname "$0")/postgres.sh"
}

step_pg() {
	ensure_postgres
	for s in $SCALES; do
		need_index "$s"
		# shellcheck disable=SC2046
		record "pg-$s" "$BENCH" pg -bin "$BIN" -data-dir "$OUT/data-$s" -queries "$OUT/queries-$s.jsonl" \
			-runs "$RUNS" -clients 1,4,16 -requests 1200 -duration 60s -threshold 0.3 -json "$RES/pg-$s.json" $(corpus_for "$s")
	done
}

# The cost account of one search per query kind (in process, one client):
# index searches, CPU time per stage, allocations (BENCHMARKS.md).
# The CPU profile make build optimises with: searches of every kind in
# process on the 1.2M real records (not on the 5M corpus the search steps
# measure), one client.
step_pgo() {
	"$BENCH" profile -data-dir "$OUT/data-1.2m" -queries "$OUT/queries-1.2m.jsonl" -requests 20000 -clients 1 \
		-cpu "$PGO" -mem "$RES/allocs-pgo.pprof" | tee "$RES/pgo.md"
}

step_costs() {
	for s in $SCALES; do
		need_index "$s"
		record "costs-$s" env GOGC=800 "$BENCH" costs -data-dir "$OUT/data-$s" -queries "$OUT/queries-$s.jsonl"
	done
}

step_profile() {
	for s in $SCALES; do
		need_index "$s"
		"$BENCH" profile -data-dir "$OUT/data-$s" -queries "$OUT/queries-$s.jsonl" -requests 4000 \
			-cpu "$RES/cpu-$s.pprof" -mem "$RES/allocs-$s.pprof" | tee "$RES/profile-$s.md"
		go tool pprof -top -cum -nodecount=40 "$BENCH" "$RES/cpu-$s.pprof" >>"$RES/profile-$s.md" 2>/dev/null
		go tool pprof -top -sample_index=alloc_space -nodecount=25 "$BENCH" "$RES/allocs-$s.pprof" >>"$RES/profile-$s.md" 2>/dev/null
	done
}

# The cost of the change record: the corpus ingested into a fresh data
# directory, again (nothing changed), again without the record
# (--no-changes), then a copy with every 100th real record edited (bench
# edits), with and without the record; each re-ingest a full build
# (--full), as when these figures were first taken. The "changes recorded" log line of
# each ingest (its duration and counts) lands next to the results.
step_changes() {
	for s in $SCALES; do
		local edited=$OUT/edited-$s d=$OUT/data-$s-changes
		[[ -d $edited ]] || record "edits-$s" "$BENCH" edits -every 100 -o "$edited" "${REAL[@]}"
		local changed=("$edited"/*.edited.jsonl.gz)
		[[ $s == 5m ]] && changed+=("$SYNTH")
		rm -rf "$d"
		# shellcheck disable=SC2046
		changes_run "$s" first "$d" $(corpus_for "$s") "${GLEIF[@]}"
		# shellcheck disable=SC2046
		changes_run "$s" same "$d" --full $(corpus_for "$s") "${GLEIF[@]}"
		# shellcheck disable=SC2046
		changes_run "$s" same-no-changes "$d" --full --no-changes $(corpus_for "$s") "${GLEIF[@]}"
		changes_run "$s" edited "$d" --full "${changed[@]}" "${GLEIF[@]}"
		changes_run "$s" edited-no-changes "$d" --full --no-changes "${changed[@]}" "${GLEIF[@]}"
		rm -rf "$d"
	done
}

changes_run() { # scale name data-dir ingest-args...
	local s=$1 name=$2 d=$3; shift 3
	record "changes-$s-$name" "$BENCH" ingest -bin "$BIN" -data-dir "$d" -json "$RES/changes-$s-$name.json" -- "$@" 2>"$RES/changes-$s-$name.log"
	grep '"changes recorded"' "$RES/changes-$s-$name.log" | tee -a "$RES/changes-$s-$name.md" || true
}

# Re-ingest at the cost of the change: the corpus ingested in full, then
# the copy with every 100th real record edited (bench edits) ingested on
# it (the default) and, into a copy of the same data directory, with
# --full; then the search of both generations side by
# side in process (BenchmarkSearchGenerations, alternating). Both data
# directories are kept for bench compare.
step_incremental() {
	for s in $SCALES; do
		local edited=$OUT/edited-$s d=$OUT/data-$s-incremental
		[[ -d $edited ]] || record "edits-$s" "$BENCH" edits -every 100 -o "$edited" "${REAL[@]}"
		local changed=("$edited"/*.edited.jsonl.gz)
		[[ $s == 5m ]] && changed+=("$SYNTH")
		rm -rf "$d" "$d-full"
		# shellcheck disable=SC2046
		incremental_run "$s" first "$d" $(corpus_for "$s") "${GLEIF[@]}"
		cp -a "$d" "$d-full"
		incremental_run "$s" incremental "$d" "${changed[@]}" "${GLEIF[@]}"
		incremental_run "$s" full "$d-full" --full "${changed[@]}" "${GLEIF[@]}"
		COMPANYDOCS_BENCH_DATA_DIRS="$(realpath "$d"),$(realpath "$d-full")" record "incremental-$s-search" \
			go test -pgo="$PGO" -run '^$' -bench BenchmarkSearchGenerations -benchtime 3000x -count 5 ./index
	done
}

# Ten re-ingests in a row on a copy of the ingest step's data directory,
# each of the scale's records with every 100th edited again (bench edits
# with the next offset on the edit before, so that each dump edits other
# records as well: 1% of the records, the synthetic ones at 5M too); a
# full build of the tenth's files; queries of the tenth's files; the
# search of both generations side by side, both servers at once (bench
# compare: the p99 ratio of each kind with its interval). Each
# generation's own bytes (the files it shares with no other) are written
# next to its ingest; the first is published after the full build and
# followed by two nodes (bench follow, a throw-away PostgreSQL), and the
# tenth after the ninth, whose layer holds every build's changes.
step_generations() {
	ensure_postgres
	for s in $SCALES; do
		need_index "$s"
		local d=$OUT/data-$s-generations files
		# shellcheck disable=SC2207
		files=($(corpus_for "$s"))
		rm -rf "$d" "$d-full"
		cp -a "$OUT/data-$s" "$d"
		for k in $(seq 1 10); do
			local edited=$OUT/edited-$s-generation-$k
			[[ -d $edited ]] || record "generations-$s-edits-$k" "$BENCH" edits -every 100 -offset "$k" -o "$edited" "${files[@]}"
			files=("$edited"/*.edited.jsonl.gz)
			incremental_run "$s" "generation-$k" "$d" "${files[@]}" "${GLEIF[@]}"
			own_bytes "$d" | tee -a "$RES/incremental-$s-generation-$k.md"
			if ((k == 1 || k == 10)); then
				mkdir -p "$RES/generations-$s-follow-$k"
				record "generations-$s-follow-$k" "$BENCH" follow -bin "$BIN" -data-dir "$d" -runs 1 -follow-interval "$FOLLOW_INTERVAL" \
					-logs "$RES/generations-$s-follow-$k" -json "$RES/generations-$s-follow-$k.json" 2>"$RES/generations-$s-follow-$k.log"
			fi
		done
		incremental_run "$s" "generation-10-full" "$d-full" "${files[@]}" "${GLEIF[@]}"
		record "generations-$s-queries" "$BENCH" queries -seed "$SEED" -per-kind 300 -orderable 2000 \
			-gleif "${GLEIF[0]}" -gleif "${GLEIF[1]}" -o "$OUT/queries-$s-generations.jsonl" -profiles "$OUT/profiles-$s-generations.txt" "${files[@]}"
		record "generations-$s-compare" "$BENCH" compare -bin "$BIN" -data-dir "$d" -base-bin "$BIN" -base-data-dir "$d-full" \
			-queries "$OUT/queries-$s-generations.jsonl" -rounds 20 -requests 1500
	done
}

# The bytes of the live generation in data-dir that it shares with no
# other (what a publish uploads), against all of its bytes.
own_bytes() {
	local gen
	gen=$1/index/$(cat "$1/index/CURRENT")
	find "$gen" -type f -printf '%n %s\n' | awk '$1 == 1 { own += $2 } { all += $2 }
		END { printf "own files: %.0f bytes of %.0f (%.2f%%)\n", own, all, 100 * own / all }'
}

incremental_run() { # scale name data-dir ingest-args...
	local s=$1 name=$2 d=$3; shift 3
	record "incremental-$s-$name" "$BENCH" ingest -bin "$BIN" -data-dir "$d" -json "$RES/incremental-$s-$name.json" -- "$@" 2>"$RES/incremental-$s-$name.log"
	grep -E '"(search index updated|building the search index anew|index segments merged|profiles compared with the previous generation)"' \
		"$RES/incremental-$s-$name.log" | tee -a "$RES/incremental-$s-$name.md" || true
}

# Publish and follow: the two newest generations of data-SCALE (the
# ingest step's, ingested here when absent, and the same corpus ingested
# again when it holds one only) are published to a file:// object store in
# $OUT/data-SCALE-follow, on the same disk, with a throw-away PostgreSQL
# metastore; nodes start on empty data directories and follow them (bench
# follow: publish, a new node to ready, its download against cp -r, a
# second publish to every node serving it). The nodes' logs land next to
# the results. Drops the page cache before each cold measurement when
# permitted (root).
step_follow() {
	ensure_postgres
	for s in $SCALES; do
		[[ -f $OUT/data-$s/index/CURRENT ]] || SCALES=$s step_ingest
		local gens=("$OUT/data-$s"/index/gen-*)
		if ((${#gens[@]} < 2)); then
			# shellcheck disable=SC2046
			record "follow-ingest-$s" /usr/bin/time -v "$BIN" ingest --full --data-dir "$OUT/data-$s" $(corpus_for "$s") "${GLEIF[@]}" 2>&1
		fi
		record "follow-$s" "$BENCH" follow -bin "$BIN" -data-dir "$OUT/data-$s" -runs "$RUNS" -follow-interval "$FOLLOW_INTERVAL" \
			-logs "$RES" -json "$RES/follow-$s.json" 2>"$RES/follow-$s.log"
	done
}

# What bleve alone spends per document (segment build and one merge), the
# floor under the ingest's CPU per record.
step_floor() {
	record floor go test -run '^$' -bench BleveFloor -benchtime 3x -count 1 ./index
}

[[ $# -gt 0 ]] || set -- all
for step in "$@"; do
	case $step in
	all) step_build; step_corpus; step_queries; step_ingest; step_floor; step_search; step_orders; step_pg; step_profile; step_costs ;;
	build | corpus | queries | ingest | floor | search | orders | orders-pg | sample | pg | profile | costs | changes | incremental | generations | pgo | follow) "step_$step" ;;
	*) echo "unknown step $step" >&2; exit 2 ;;
	esac
done
