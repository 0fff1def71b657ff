# companydocs: build, run, test and benchmark targets.
GO      ?= go
PKGS    := ./...
DATA    ?= ../shared/data

.PHONY: run build deb test test-race test-race-e2e test-command test-eval test-follow test-crashes test-national test-deb test-alerts test-crash test-resources eval calibrate vet fmt-check lint vuln fuzz-short bench bench-ingest bench-search bench-orders bench-orders-sample bench-orders-pg bench-orders-pg-sample bench-pg bench-changes bench-ingest-incremental bench-generations bench-watches bench-follow bench-pgo clean

## run: build bin/companydocs and serve the embedded sample with a demo account on http://127.0.0.1:8080/
## (exec: the server replaces the recipe's shell, so Ctrl-C and SIGTERM reach it and it shuts down);
## ARGS adds serve flags: make run ARGS='--addr 127.0.0.1:9090'
ARGS ?=
run: build
	exec bin/companydocs serve --demo $(ARGS)

## build: build the binary into bin/companydocs, optimised by PGO, a CPU profile of searches (see "Profile-guided
## optimisation" in BENCHMARKS.md; PGO=off builds without it)
PGO ?= cmd/companydocs/search.pgo
build:
	$(GO) build -pgo=$(PGO) -o bin/companydocs ./cmd/companydocs

## deb: build the Debian package bin/companydocs_VERSION_ARCH.deb of make build's binary with nfpm (scripts/deb.sh:
## the binary, the hardened systemd unit companydocs.service, /etc/companydocs/companydocs.env; docs/operations.md,
## "The Debian package")
deb: build
	GO=$(GO) scripts/deb.sh bin/companydocs bin/

## test: every test, plus vet, gofmt and the ranking evaluation: the race detector over every package but the
## command's end-to-end tests (app/e2e/...) and the deployment guide (deploy: it starts PostgreSQL and SeaweedFS and
## mostly waits), and over the end-to-end tests where the server's goroutines meet (RACE_E2E); the other end-to-end
## tests (the server runs in the test process, three times slower under the race detector; among them the documented
## commands and the tests that kill or measure processes) without it, beside the race run; beside them both, the
## ranking evaluation, the follow tests (app/e2e/follow: mostly waiting on the object store, slow downloads and follow
## intervals), the crash tests (app/e2e/crash: killed processes) and the race detector over RACE_E2E, on lines of
## their own (two of them mostly wait); then the resource scenarios alone
## (they bound the server's memory and its bystanders' latency);
## scripts/postgres.sh first installs PostgreSQL if missing (the PostgreSQL store's tests run throw-away clusters),
## scripts/objectstore.sh builds the object store if missing (the object store's tests run a throw-away SeaweedFS),
## scripts/stripemock.sh installs stripe-mock if missing (the payment tests run a throw-away one);
## the alert rules' tests first (the Debian package's check, make test-deb, runs apart: it installs lintian and needs
## root for its throw-away overlay of /)
test: vet fmt-check test-alerts
	scripts/postgres.sh
	scripts/objectstore.sh
	scripts/stripemock.sh
	$(MAKE) --no-print-directory -j4 --output-sync=target test-race test-command test-eval test-follow test-crashes test-race-e2e
	$(GO) test -tags resources -count=1 -timeout 15m ./app/e2e/resources/

# E2E: the command's end-to-end test packages but follow, publish and crash (on lines of their own) and resources (tag
# resources, run alone), with the deployment guide, the longest first (RELIABILITY.md, "Test time per package") so that
# go test -p 2 packs the short ones beside them
E2E := ./app/e2e/serve/ ./deploy/ ./app/e2e/orders/ ./app/e2e/browser/ ./app/e2e/docs/ ./app/e2e/search/ ./app/e2e/store/ ./app/e2e/webhooks/
# RACE_E2E: the end-to-end tests that also run under the race detector: several nodes, swaps and rollouts under load,
# batches, hostile requests, the order lifecycle, webhooks and access control; RACE_E2E_PKGS: the packages that hold them
RACE_E2E := ^(TestTwoNodes|TestHotSwapUnderLoad|TestOrdersDuringARollout|TestWatchesTwoNodes|TestSearchBatchOverHTTP|TestHostileRequests|TestLifecycleEndToEnd|TestWebhooksEndToEnd|TestAccessControl)$$
RACE_E2E_PKGS := ./app/e2e/store/ ./app/e2e/serve/ ./app/e2e/follow/ ./app/e2e/webhooks/ ./app/e2e/search/ ./app/e2e/orders/
# LIBPKGS: the longest packages under the race detector first (index about 220 s, bbolt 95 s, ingest, ordering, the
# object store's), so that go test -p 2 packs the short ones beside them instead of ending on index alone; without
# the end-to-end tests and the deployment guide
LIBPKGS = $(shell $(GO) list ./index ./bbolt ./ingest ./ordering ./internal/objectstoretest ./... | grep -v '/app/e2e/\|/deploy$$')

# INCREMENTAL: the index's tests of incremental builds over the whole sample or chunk 53, several builds each; the race
# run leaves them out (about eight minutes of its longest package under the race detector) and test-eval runs them
# without it (TestIncrementalBuildOnDamagedBase and TestDamagedProfileLayerIsNeverServed keep an incremental build, and
# a layered profile store, under the race detector)
INCREMENTAL := ^(TestIncrementalFallsBackToFullBuild|TestIncrementalBuildOnRealEdits|TestKilledIncrementalBuild|TestLayeredProfilesAsFullBuild|TestLayersRestartPastTheLimit)$$

test-race:
	$(GO) test -race -count=1 -timeout 20m -skip '$(INCREMENTAL)' $(LIBPKGS)

test-race-e2e:
	$(GO) test -race -count=1 -timeout 20m -run '$(RACE_E2E)' $(RACE_E2E_PKGS)

# E2E_TIMEOUT: alone, every end-to-end package ends well inside go test's default 10 minutes (under 4 on 2 cores);
# make test runs them four lines at once beside the race detector, which can double that
E2E_TIMEOUT := 20m

# test-command: the end-to-end tests of E2E, without the race detector
test-command:
	$(GO) test -count=1 -timeout $(E2E_TIMEOUT) -skip '$(RACE_E2E)' $(E2E)

# EVAL: the resolver's tests over a real index of the embedded sample, which the race run leaves out (go:build
# !race): the evaluation with its golden files and calibration, the clue readings, reachability of every profile
EVAL := ^(TestEvaluation.*|TestClueReadings|TestSharedDirectorIsCapped|TestCutNamesAreSearchedAsStarts|TestEveryVerifiedProfileReachable)$$

# and the index's test that an incremental generation answers the evaluation as a full build does (go:build !race too)
test-eval:
	$(GO) test -count=1 -run '$(EVAL)' ./resolver/
	$(GO) test -count=1 -run '^TestIncrementalAnswersAsFullBuild$$|$(INCREMENTAL)' ./index/

# test-follow and test-crashes: the follow and publish tests (app/e2e/follow, app/e2e/publish) and the crash tests
# (app/e2e/crash), without the race detector, as they kill processes and take the object store away; they wait on
# SeaweedFS (11 s to start, 15 s to stop, 17 s to start again), slow downloads, follow intervals and killed processes
# more than they compute, so make test runs them on lines of their own
test-follow:
	$(GO) test -count=1 -timeout $(E2E_TIMEOUT) -skip '$(RACE_E2E)' ./app/e2e/follow/ ./app/e2e/publish/

test-crashes:
	$(GO) test -count=1 -timeout $(E2E_TIMEOUT) ./app/e2e/crash/

## test-deb: check the Debian package of a fresh build (scripts/deb-check.sh): lintian (installed with apt-get if
## missing) without errors or warnings, its files and modes, systemd-analyze verify on its unit; then, as root, on a
## throw-away overlay of /, dpkg -i, the service started as its unit starts it (as user companydocs, the file system
## read-only but the data directory) until /readyz is 200 and stopped by SIGTERM, then an upgrade, remove and purge
test-deb:
	GO=$(GO) scripts/deb-check.sh

## test-alerts: check the Prometheus alert rules (deploy/prometheus/companydocs-alerts.yml) and run their unit tests
## with promtool (scripts/promtool.sh takes it from Debian's prometheus package if missing)
test-alerts:
	promtool=$$(scripts/promtool.sh) && $$promtool check rules deploy/prometheus/companydocs-alerts.yml && \
		$$promtool test rules deploy/prometheus/companydocs-alerts_test.yml

## test-national: the tests over the whole national dump (1.2M records of ocdata chunks, build tag national);
## needs DATA (default ../shared/data; without it they skip, under CI=true they fail)
test-national:
	COMPANYDOCS_NATIONAL_DATA=$(abspath $(DATA)) $(GO) test -tags national -count=1 -timeout 60m -run 'National' $(PKGS)

## test-resources: the resource scenarios of RELIABILITY.md alone, verbose, with their figures (attacks at the probe's scale on 127.0.0.1)
## (tag resources, without the race detector: they bound the server's resident memory)
test-resources:
	scripts/postgres.sh
	$(GO) test -tags resources -count=1 -timeout 15m -v ./app/e2e/resources/

## eval: the ranking evaluation alone, verbose (misses are listed)
eval:
	$(GO) test -count=1 -v -run 'TestEvaluation' ./resolver/

## calibrate: refit the confidence after a ranking change: rerun the evaluation, write each candidate's score and whether
## it is right to resolver/testdata/calibration/rows.tsv, fit resolver/calibration_table.go on them, rewrite the golden
## top-3 (its confidences move with the table) and print the held-out reliability table (docs/api.md, "Confidence")
calibrate:
	$(GO) test -count=1 -run 'TestEvaluationConfidence$$' ./resolver/ -args -update-calibration
	$(GO) test -count=1 -run 'TestEvaluation$$' ./resolver/ -args -update-golden
	$(GO) test -count=1 -v -run 'TestEvaluationConfidence$$|TestConfidence' ./resolver/

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

## bench: the national-scale benchmark, 1.2M and 5M records (hours; not part of test; see BENCHMARKS.md)
bench:
	DATA=$(DATA) scripts/bench.sh all

## bench-ingest: generate the synthetic corpus, time the ingests and measure bleve's floor per document
bench-ingest:
	DATA=$(DATA) scripts/bench.sh build corpus ingest floor

## bench-search: search latency over HTTP, the in-process profile and the cost account per query kind (needs bench-ingest)
bench-search:
	DATA=$(DATA) scripts/bench.sh build corpus queries search profile costs

## bench-pgo: record cmd/companydocs/search.pgo, the CPU profile make build optimises with, from searches on the 1.2M real records (needs bench-ingest)
bench-pgo:
	DATA=$(DATA) scripts/bench.sh build corpus queries pgo

## bench-orders: order creation throughput and complete lifecycles with webhooks (needs bench-ingest)
bench-orders:
	DATA=$(DATA) scripts/bench.sh build corpus queries orders

## bench-orders-sample: the same on the embedded sample (minutes; no national corpus needed)
bench-orders-sample:
	DATA=$(DATA) BENCH_SCALES=sample scripts/bench.sh build sample orders

## bench-orders-pg: bench-orders with the PostgreSQL store, one node and two nodes (needs bench-ingest)
bench-orders-pg:
	DATA=$(DATA) scripts/bench.sh build corpus queries orders-pg

## bench-orders-pg-sample: the same on the embedded sample (minutes; no national corpus needed)
bench-orders-pg-sample:
	DATA=$(DATA) BENCH_SCALES=sample scripts/bench.sh build sample orders-pg

## bench-changes: the cost of the change record: ingests of the same and of edited records, with and without it (1.2M and 5M)
bench-changes:
	DATA=$(DATA) scripts/bench.sh build corpus changes

## bench-ingest-incremental: a re-ingest of 1% edited records on the previous generation against a full build of the same files (wall, CPU, peak RSS), and the search of both (BENCH_SCALES, default 1.2m; 5m needs bench-ingest's corpus)
bench-ingest-incremental:
	DATA=$(DATA) BENCH_SCALES="$${BENCH_SCALES:-1.2m}" scripts/bench.sh build incremental

## bench-generations: ten re-ingests in a row of 1% edited records (5M: needs bench-ingest's corpus and index), a full build of the tenth's files, and the search of both side by side (bench compare, p99 per kind with its interval); each generation's own bytes, and the publish and follow of the first and of the tenth (a throw-away PostgreSQL); about 50 minutes at 5M
bench-generations:
	DATA=$(DATA) BENCH_SCALES="$${BENCH_SCALES:-5m}" scripts/bench.sh build generations

## bench-watches: a swap with 100,000 watches on bbolt (1,000 accounts on the real fixture profiles, every watched profile changed): the time until every company.changed event is in the outbox, and until all are fanned out to deliveries (a minute or two; not part of test)
bench-watches:
	$(GO) test -count=1 -run '^$$' -bench 'BenchmarkCompareWatches100k' -benchtime 1x -timeout 20m ./ordering/

## bench-follow: publish and follow at 1.2M and 5M: time publish, a new node on an empty data directory to /readyz 200,
## its download against cp -r on the same disk, and a second publish to every node serving it (a throw-away PostgreSQL
## cluster, a file:// object store; ingests the corpus, and a second generation, when var/bench lacks them)
bench-follow:
	DATA=$(DATA) scripts/bench.sh build corpus follow

## bench-pg: the same name queries against PostgreSQL pg_trgm (needs bench-ingest)
bench-pg:
	DATA=$(DATA) scripts/bench.sh build corpus queries pg

## test-crash: the crash test alone, verbose (SIGKILL under order load, then the store is checked)
test-crash:
	scripts/postgres.sh
	$(GO) test -count=1 -v -run 'TestCrashSafety' ./app/e2e/crash/

## lint: go vet, staticcheck (configured in staticcheck.conf; also over the resource scenarios, tag resources, and the national tests' vet, tag national) and deadcode
lint: vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)
	$(GO) vet -tags resources ./app/e2e/resources/
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags resources ./app/e2e/resources/
	$(GO) vet -tags national .
	GO=$(GO) scripts/deadcode.sh

## vuln: govulncheck; fails on a known vulnerability in called code
vuln:
	GO=$(GO) scripts/vuln.sh

## fuzz-short: every fuzz target for FUZZTIME (default 10s) each
fuzz-short:
	GO=$(GO) scripts/fuzz-short.sh

clean:
	rm -rf bin var
