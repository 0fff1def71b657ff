# companydocs: build, run, test and benchmark targets.
GO      ?= go
PKGS    := ./...
DATA    ?= ../shared/data

.PHONY: run build test vet fmt-check lint bench bench-ingest bench-search bench-orders clean

## run: build and serve the embedded sample with a demo account on http://127.0.0.1:8080/
run:
	$(GO) run ./cmd/companydocs serve --demo

## build: build the binary into bin/companydocs
build:
	$(GO) build -o bin/companydocs ./cmd/companydocs

## test: every test, with the race detector, plus vet and gofmt
test: vet fmt-check
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin var
