# companydocs: build, run, test and benchmark targets.
GO      ?= go
PKGS    := ./...
DATA    ?= ../shared/data

.PHONY: run build test eval vet fmt-check lint bench bench-ingest bench-search bench-orders clean

## run: build and serve the embedded sample with a demo account on http://127.0.0.1:8080/
run:
	$(GO) run ./cmd/companydocs serve --demo

## build: build the binary into bin/companydocs
build:
	$(GO) build -o bin/companydocs ./cmd/companydocs

## test: every test, with the race detector, plus vet, gofmt and the ranking evaluation
test: vet fmt-check
	$(GO) test -race -count=1 -timeout 20m $(PKGS)
	$(GO) test -count=1 -run 'TestEvaluation' ./resolver/

## eval: the ranking evaluation alone, verbose (misses are listed)
eval:
	$(GO) test -count=1 -v -run 'TestEvaluation' ./resolver/

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin var
