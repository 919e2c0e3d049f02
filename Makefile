# weave: see README.md and docs/.

GO ?= go
BIN := bin
OUT := out
PREFIX ?= /usr/local
# VERSION is what weave version prints (cmd/weave/version.go): by default
# the commit, from git describe.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

.PHONY: all build install demo test test-short deps vet clean

all: build

# urfave_cli_no_docs leaves out the CLI library's man page writer (and
# the markdown package it starts at every run: 0.3 ms of each weave cc).
build:
	$(GO) build -tags urfave_cli_no_docs -ldflags "-X main.version=$(VERSION)" -o $(BIN)/weave ./cmd/weave

# install puts weave and its weave-cc link (CC=weave-cc) in $(DESTDIR)$(PREFIX)/bin.
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN)/weave $(DESTDIR)$(PREFIX)/bin/weave
	ln -sf weave $(DESTDIR)$(PREFIX)/bin/weave-cc

# demo weaves mprof's producer/consumer example, runs it and prints the report.
demo: build
	@mkdir -p $(OUT)
	$(BIN)/weave cc -O2 -g -o $(OUT)/widgets testdata/widgets.c
	cd $(OUT) && WEAVE_OUT=widgets.prof ./widgets 100000
	$(BIN)/weave report $(OUT)/widgets.prof

# test runs every test, the corpus ones (c-torture, benchmarksgame) included;
# TESTFLAGS passes more flags to go test (.ci/run: -json, for its summary).
TESTFLAGS ?=
test:
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) -timeout 60m ./...

test-short:
	$(GO) test -short ./...

# deps installs what make test needs besides Go and gcc (Debian/Ubuntu, as root):
# the tools and the libraries of the benchmarks game programs; CI installs the
# same list (scripts/deps.sh).
deps:
	scripts/deps.sh

# bench measures weave's overhead against the uninstrumented programs and
# peer tools (BENCHMARKS.md); BENCH_SIZE=tiny is the seconds-long smoke run
# CI does, BENCH_FLAGS passes more flags (go run ./bench -h).
BENCH_SIZE ?= full
.PHONY: bench bench-setup
bench:
	$(GO) run ./bench -size $(BENCH_SIZE) $(BENCH_FLAGS)

# bench-setup installs the peer tools bench compares against (Debian/Ubuntu, as root).
bench-setup:
	apt-get update -qq
	apt-get install -y -qq valgrind heaptrack uftrace clang >/dev/null
	apt-get install -y -qq hyperfine >/dev/null || true

clean:
	rm -rf $(BIN) $(OUT)
